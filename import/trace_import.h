#pragma once
// `pipesim import trace`: a scenario whose costs are what a PyTorch pipelining run measured
// (import/pytorch_trace.h). Each rank's F, I, W (or B) time is the sum over the stages it holds of their mean
// traced times (the schedule's placement says which stages a rank holds; explicit costs split a rank's time
// evenly over its chunks). Transfers, optimizer steps and memory are not in such a trace: the scenario says
// so and leaves them at zero.
#include <string>
#include <vector>

#include "import/pytorch_trace.h"

namespace pipesim {

struct TraceImportSettings {
  std::string name = "traced";
  std::string schedule;  // the registered schedule (or PyTorch class name) the traced run used
  int ranks = 0;         // pipeline ranks; 0: the schedule's stages per rank decide (stages / chunks)
  std::string origin;    // the command, for the file's first line
  std::vector<std::string> sources;
};

// The scenario's YAML (it reads back before it is returned) with the per-(stage, kind) distributions in its
// comments. Throws InputError when the trace holds no pipelining action, when its stages do not fit the
// schedule's placement on the ranks, or when a stage lacks a kind the schedule runs.
std::string scenario_from_trace(const TracedActions& traced, const TraceImportSettings& settings);

// The per-(stage, kind) table: stage, kind, count, mean, median, p10, p90, min, max (ms).
std::string traced_durations_table(const TracedActions& traced);

}  // namespace pipesim
