#include "import/launch_settings.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.h"

namespace pipesim {
namespace {

// ", pipeline: {layer_split: [...]}" for an uneven split, "" for an even one.
std::string uneven_split_text(const std::vector<int>& stage_layers) {
  return stage_layers.empty()
             ? ""
             : fmt::format(", pipeline: {{layer_split: [{}]}}", fmt::join(stage_layers, ", "));
}

}  // namespace

ImportSettings megatron_launch_settings(MegatronImport& launch, int data_parallel, ImportSettings settings) {
  if (settings.name.empty()) settings.name = "megatron-gpt";
  settings.stages = launch.pipeline_stages;
  const long long per_step = static_cast<long long>(launch.micro_batch) * data_parallel;
  const long long global = launch.global_batch > 0 ? launch.global_batch : per_step;
  if (global % per_step != 0) {
    throw InputError(
        fmt::format("--global-batch-size {} is not a multiple of --micro-batch-size {} x --data-parallel {}",
                    global, launch.micro_batch, data_parallel));
  }
  settings.microbatches = static_cast<int>(global / per_step);
  settings.global_batch = static_cast<int>(global / data_parallel);
  settings.pipeline_from_options = false;
  settings.pipeline_notes.push_back(fmt::format(
      "{} stages (--pipeline-model-parallel-size); one data-parallel replica of {}: {} sequences per step "
      "in m = {} microbatches of {}{}",
      launch.pipeline_stages, data_parallel, settings.global_batch, settings.microbatches, launch.micro_batch,
      launch.global_batch > 0 ? ""
                              : " (no --global-batch-size: Megatron's default, one microbatch per replica)"));
  // Megatron's own layout, uneven stages included, on its own entry: the others compare at an even split.
  const std::string uneven = uneven_split_text(launch.stage_layers);
  const std::string schedule =
      launch.chunks > 1 ? fmt::format("{{name: interleaved-1f1b, chunks: {}{}}}", launch.chunks, uneven)
                        : (uneven.empty() ? "1f1b-flush" : fmt::format("{{name: 1f1b-flush{}}}", uneven));
  settings.pipeline_notes.push_back(
      fmt::format("Megatron's schedule first ({}), then the Zero Bubble schedules to compare", schedule));
  settings.schedules =
      fmt::format("[{}{}, zb-h1, zb-h2, zb-v]", schedule, launch.chunks > 1 ? ", 1f1b-flush" : "");
  launch.imported.parallel.data = data_parallel;
  if (data_parallel == 1) launch.imported.parallel.zero = 0;
  return settings;
}

ImportSettings torchtitan_launch_settings(const TorchtitanImport& job, ImportSettings settings) {
  settings.stages = job.pipeline_stages;
  settings.microbatches = job.microbatches;
  settings.global_batch = job.local_batch;
  settings.pipeline_from_options = false;
  // The job's own split on its entry; the schedule compared with it runs at an even split.
  const std::string uneven = uneven_split_text(job.stage_layers);
  const bool takes_chunks = job.chunks > 1 && job.schedule != "zb-v" && job.schedule != "dualpipe-v" &&
                            job.schedule != "v-half" && job.schedule != "v-min";
  const std::string schedule =
      takes_chunks ? fmt::format("{{name: {}, chunks: {}{}}}", job.schedule, job.chunks, uneven)
                   : (uneven.empty() ? job.schedule : fmt::format("{{name: {}{}}}", job.schedule, uneven));
  settings.schedules =
      fmt::format("[{}{}]", schedule, job.schedule == "1f1b-flush" ? ", zb-h1, zb-v" : ", 1f1b-flush");
  settings.pipeline_notes.push_back(
      fmt::format("{} stages, one pipeline replica: {} sequences per step (training.local_batch_size) in m "
                  "= {} microbatches",
                  job.pipeline_stages, job.local_batch, job.microbatches));
  settings.pipeline_notes.push_back(
      fmt::format("the job's schedule first ({}), then one to compare", schedule));
  return settings;
}

}  // namespace pipesim
