#pragma once
// A Chrome/Kineto trace of a PyTorch pipelining run (torch.profiler's export_chrome_trace, one file per
// rank or merged). PyTorch's pipelining runtime wraps every action in a profiler range named "PP:" and the
// action as its lists write it: stage, kind, microbatch ("PP:2F0", "PP:1I3", "PP:0W1", "PP:1B2",
// "PP:0SEND_F1", "PP:1RECV_B0", "PP:0UNSHARD"). The compute actions (F, B, I, W) become per-(stage, kind)
// duration distributions; the others are counted and left out of the costs.
#include <array>
#include <map>
#include <string>
#include <vector>

#include "sim/action.h"

namespace pipesim {

struct TracedActions {
  // Durations in ms of each compute action, by stage and kind (F, B, I, W; never U).
  std::map<int, std::array<std::vector<double>, kOpKinds>> durations_ms;
  int stages = 0;        // the largest stage seen + 1
  int microbatches = 0;  // the largest microbatch seen + 1 (microbatches restart at each step)
  int steps = 0;         // forwards of stage 0, microbatch 0
  std::map<std::string, int> other_actions;  // SEND_F, RECV_B, UNSHARD, ...: how many of each
  int events = 0;                            // complete ("X") events read, pipelining's or not
};

// Reads one trace file's text into `into` (call once per rank's file). Throws InputError naming the file
// (and the JSON position) when it is not a Chrome trace.
void read_pytorch_trace(const std::string& text, const std::string& source, TracedActions& into);

// Count, mean, median, 10th and 90th percentile, min and max of some durations.
struct DurationSummary {
  int count = 0;
  double mean = 0, median = 0, p10 = 0, p90 = 0, min = 0, max = 0;
};
DurationSummary summarize_durations(std::vector<double> values_ms);

}  // namespace pipesim
