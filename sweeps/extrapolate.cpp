#include "sweeps/extrapolate.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "api/zb_model_scenario.h"
#include "base/errors.h"
#include "cost_models/chunk_layers.h"
#include "io/hardware_profile_reader.h"
#include "report/format.h"
#include "spec/hardware_profile.h"

namespace pipesim {
namespace {

// The paper's memory figures are GB of 1e9 bytes; every pipesim table is in GiB.
double published_gib(double gb) {
  return gb * 1e9 / kBytesPerGiB;
}

struct ScheduleChoice {
  std::string name;
  // "m" stands for the run's microbatches, "v" for the model's chunks of one layer
  std::vector<std::pair<std::string, std::string>> params;
};

// The schedules compared, in report order.
const std::vector<ScheduleChoice>& schedule_choices() {
  static const std::vector<ScheduleChoice> choices = {{"1f1b-flush", {}},
                                                      {"interleaved-1f1b", {{"chunks", "v"}}},
                                                      {"zb-1p", {}},
                                                      {"zb-2p", {}},
                                                      {"pipedream", {}},
                                                      {"pipedream-2bw", {}},
                                                      {"paci", {{"accumulation", "m"}}},
                                                      {"gpipe", {}}};
  return choices;
}

const ZbMeasured* find_measured(const std::vector<ZbMeasured>& measured, const std::string& model, int m) {
  for (const ZbMeasured& row : measured) {
    if (row.model == model && row.microbatches == m) return &row;
  }
  return nullptr;
}

ExtrapolationRow predict(const Scenario& scenario, const ScheduleChoice& choice, ExtrapolationRow row,
                         const Limits& limits) {
  row.schedule = choice.name;
  ScheduleRequest request{choice.name, ScheduleParams(fmt::format("extrapolate {}", choice.name))};
  for (const auto& [key, value] : choice.params) {
    if (value == "v" && row.interleaved_chunks == 0) {
      row.error = "layers + 2 do not divide by N: no chunk count gives one layer per chunk";
      return row;
    }
    const int stand_in = value == "m" ? scenario.microbatches : value == "v" ? row.interleaved_chunks : 0;
    request.params.set(key, stand_in > 0 ? std::to_string(stand_in) : value);
  }
  try {
    const SimulationResult run = simulate_schedule(scenario, request, SimulationOptions{.limits = limits});
    row.throughput_samples_per_gpu_s = run.metrics.throughput_samples_per_gpu_s;
    row.peak_memory_gib = static_cast<double>(run.memory.peak_bytes()) / kBytesPerGiB;
    row.bubble_fraction = run.metrics.bubble_fraction;
    int drift = 0, bound = 0;
    for (const StageDrift& s : run.drift.stages) drift = std::max(drift, s.drift_max);
    for (const StageGuarantee& g : run.guarantees) bound = std::max(bound, g.drift_bound);
    row.drift_max = drift;
    row.drift_bound = bound;
  } catch (const std::exception& e) {
    row.error = e.what();
  }
  return row;
}

}  // namespace

Extrapolation run_extrapolation(const ExtrapolateOptions& options,
                                const std::function<void(const std::string&)>& progress) {
  const std::vector<ZbModel> models = load_zb_models(options.data_dir);
  const std::vector<ZbMeasured> measured = load_zb_measured(options.data_dir);
  for (const std::string& name : options.models) find_zb_model(models, name);  // unknown names fail early
  const HardwareProfile profile = load_hardware_profile(resolve_profile_path(options.profile));
  Extrapolation e;
  e.profile_source = profile.source;
  e.memory_capacity_gib = profile.memory_capacity_bytes() / kBytesPerGiB;
  e.blocking_comm = options.blocking_comm;
  for (const ZbModel& model : models) {
    if (!options.models.empty() &&
        std::find(options.models.begin(), options.models.end(), model.name) == options.models.end()) {
      continue;
    }
    for (int m : model.microbatches) {
      progress(fmt::format("{} N={} m={}", model.name, model.stages, m));
      Scenario scenario = zb_model_scenario(model, m, options.profile, options.batches);
      scenario.comm.blocking = options.blocking_comm;
      ExtrapolationRow base;
      base.model = model.name;
      base.stages = model.stages;
      base.microbatch_size = model.microbatch_size;
      base.microbatches = m;
      // The Zero Bubble paper ran 1F1B-I with one transformer layer per chunk (zb_model_scenario splits zb).
      try {
        base.interleaved_chunks = one_layer_chunks(model.model.layers, model.stages, LayerSplit::kZeroBubble);
      } catch (const InputError&) {
        base.interleaved_chunks = 0;  // that row says why
      }
      const ZbMeasured* published = find_measured(measured, model.name, m);
      for (const ScheduleChoice& choice : schedule_choices()) {
        ExtrapolationRow row = predict(scenario, choice, base, options.limits);
        if (published && choice.name == "1f1b-flush") {
          row.measured_throughput_samples_per_gpu_s = published->throughput_1f1b;
          row.measured_memory_gib = published_gib(published->memory_gb_1f1b);
        } else if (published && choice.name == "zb-2p") {
          row.measured_throughput_samples_per_gpu_s = published->throughput_zb2p;
          row.measured_memory_gib = published_gib(published->memory_gb_zb2p);
        }
        e.rows.push_back(std::move(row));
      }
      if (published) {
        ExtrapolationRow paper = base;
        paper.schedule = kPaciPaperMethod;
        paper.throughput_samples_per_gpu_s =
            published->throughput_1f1b * (m + model.stages - 1) / static_cast<double>(m);
        paper.peak_memory_gib = published_gib(published->memory_gb_1f1b);
        e.rows.push_back(std::move(paper));
      }
    }
  }
  return e;
}

}  // namespace pipesim
