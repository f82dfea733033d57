#include "import/trace_import.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <memory>

#include "base/errors.h"
#include "import/import_scenario.h"
#include "io/scenario.h"
#include "report/format.h"
#include "schedules/registry.h"

namespace pipesim {
namespace {

constexpr OpKind kComputeKinds[] = {OpKind::F, OpKind::B, OpKind::I, OpKind::W};

const std::vector<double>& durations(const TracedActions& traced, int stage, OpKind kind) {
  static const std::vector<double> none;
  const auto found = traced.durations_ms.find(stage);
  return found == traced.durations_ms.end() ? none : found->second[static_cast<size_t>(kind)];
}

double mean_ms(const TracedActions& traced, int stage, OpKind kind) {
  return summarize_durations(durations(traced, stage, kind)).mean;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    const size_t end = std::min(text.find('\n', begin), text.size());
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

// The schedule as the run used it: with the ranks given, a schedule that takes chunks gets stages / ranks
// (`chunks_given`: that count; 0 when its own placement decides).
std::unique_ptr<Schedule> traced_schedule(const std::string& name, int stages, int ranks, int& chunks_given) {
  chunks_given = 0;
  if (ranks > 0 && stages % ranks == 0 && stages / ranks > 1) {
    ScheduleParams params;
    params.set("chunks", std::to_string(stages / ranks));
    try {
      std::unique_ptr<Schedule> chunked = make_schedule(name, params);
      chunks_given = stages / ranks;
      return chunked;
    } catch (const InputError&) {
      // It takes no chunks: its own placement decides.
    }
  }
  return make_schedule(name, ScheduleParams());
}

std::string ms_list(const std::vector<double>& values) {
  std::vector<std::string> cells;
  for (double v : values) cells.push_back(fmt::format("{:.6g}", v));
  return fmt::format("[{}]", fmt::join(cells, ", "));
}

}  // namespace

std::string traced_durations_table(const TracedActions& traced) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& [stage, kinds] : traced.durations_ms) {
    for (OpKind kind : kComputeKinds) {
      const DurationSummary s = summarize_durations(kinds[static_cast<size_t>(kind)]);
      if (s.count == 0) continue;
      rows.push_back({std::to_string(stage), std::string(1, op_letter(kind)), std::to_string(s.count),
                      fmt::format("{:.4f}", s.mean), fmt::format("{:.4f}", s.median),
                      fmt::format("{:.4f}", s.p10), fmt::format("{:.4f}", s.p90),
                      fmt::format("{:.4f}", s.min), fmt::format("{:.4f}", s.max)});
    }
  }
  return render_table(
      {"stage", "kind", "count", "mean ms", "median ms", "p10 ms", "p90 ms", "min ms", "max ms"}, rows);
}

std::string scenario_from_trace(const TracedActions& traced, const TraceImportSettings& settings) {
  const std::string sources = fmt::format("{}", fmt::join(settings.sources, ", "));
  if (traced.stages == 0) {
    throw InputError(
        fmt::format("{}: no pipelining action (no complete event named PP:<stage><F|B|I|W><microbatch>; "
                    "was the run profiled with torch.profiler around schedule.step()?)",
                    sources));
  }
  const std::string schedule_name = canonical_schedule_name(settings.schedule);
  int chunks_given = 0;
  const std::unique_ptr<Schedule> schedule =
      traced_schedule(schedule_name, traced.stages, settings.ranks, chunks_given);
  const int chunks = schedule->layout(1).chunks_per_device;
  const int ranks = settings.ranks > 0 ? settings.ranks : traced.stages / std::max(1, chunks);
  const PipelineLayout layout = schedule->layout(std::max(1, ranks));
  if (layout.stages != traced.stages) {
    throw InputError(
        fmt::format("{}: the trace has {} stages, but {} on {} rank(s) places {} (give --ranks, or the "
                    "schedule the run used)",
                    sources, traced.stages, schedule->label(), ranks, layout.stages));
  }
  const bool split = schedule->splits_backward();
  std::vector<double> forward(ranks, 0), backward(ranks, 0), input(ranks, 0), weight(ranks, 0);
  for (int stage = 0; stage < layout.stages; ++stage) {
    const int rank = layout.device(stage);
    if (durations(traced, stage, OpKind::F).empty()) {
      throw InputError(
          fmt::format("{}: stage {} has no traced forward (PP:{}F<microbatch>)", sources, stage, stage));
    }
    forward[rank] += mean_ms(traced, stage, OpKind::F);
    if (split) {
      if (durations(traced, stage, OpKind::I).empty() || durations(traced, stage, OpKind::W).empty()) {
        throw InputError(fmt::format("{}: {} splits the backward, but stage {} has no traced I and W",
                                     sources, schedule->label(), stage));
      }
      input[rank] += mean_ms(traced, stage, OpKind::I);
      weight[rank] += mean_ms(traced, stage, OpKind::W);
    } else {
      if (durations(traced, stage, OpKind::B).empty()) {
        throw InputError(fmt::format("{}: stage {} has no traced full backward (PP:{}B<microbatch>) for {}",
                                     sources, stage, stage, schedule->label()));
      }
      backward[rank] += mean_ms(traced, stage, OpKind::B);
    }
  }
  std::string text = fmt::format("# {}\n", settings.origin);
  text += fmt::format(
      "# Costs measured by a PyTorch pipelining run: {} ({} complete events, {} steps of m = {} "
      "microbatches, {} "
      "stages on {} ranks as {} places them).\n",
      sources, traced.events, traced.steps, traced.microbatches, traced.stages, ranks, schedule->label());
  text +=
      "# Each rank's times are the means over its stages' traced actions (per stage and kind below, in ms);\n"
      "# a rank's time is split evenly over its chunks. Not in the trace, so zero here: transfers "
      "(SEND/RECV\n"
      "# ranges time only their launch), optimizer steps and memory.\n";
  for (const std::string& line : lines_of(traced_durations_table(traced))) text += "#   " + line + "\n";
  if (!traced.other_actions.empty()) {
    std::vector<std::string> others;
    for (const auto& [kind, count] : traced.other_actions)
      others.push_back(fmt::format("{} x{}", kind, count));
    text += fmt::format("# Other pipelining actions read and left out: {}.\n", fmt::join(others, ", "));
  }
  text += imported_name_line(settings.name);
  text += fmt::format("pipeline: {{stages: {}, microbatches: {}}}\n", ranks, traced.microbatches);
  text += fmt::format("costs:\n  forward_ms: {}\n", ms_list(forward));
  if (split) {
    text +=
        fmt::format("  backward_input_ms: {}\n  backward_weight_ms: {}\n", ms_list(input), ms_list(weight));
  } else {
    text += fmt::format("  backward_ms: {}\n", ms_list(backward));
  }
  text += chunks_given == 0
              ? fmt::format("schedules: [{}]\n", schedule_name)
              : fmt::format("schedules: [{{name: {}, chunks: {}}}]\n", schedule_name, chunks_given);
  expect_imported_scenario_reads_back(text, fmt::format("the scenario imported from {}", sources));
  return text;
}

}  // namespace pipesim
