#include "executor/measured_costs.h"

#include <algorithm>

namespace pipesim::executor {

MeasuredCostModel::MeasuredCostModel(const std::vector<ExecutedOp>& ops, int stages,
                                     const CostModel& memory_and_transfers)
    : mean_ns_(stages), other_(memory_and_transfers) {
  std::vector<std::array<std::vector<TimeNs>, kOpKinds>> samples(stages);
  for (const ExecutedOp& op : ops) {
    samples[op.action.stage][static_cast<int>(op.action.kind)].push_back(op.end_ns - op.start_ns);
  }
  for (int s = 0; s < stages; ++s) {
    for (int k = 0; k < kOpKinds; ++k) {
      const std::vector<TimeNs>& v = samples[s][k];
      if (v.empty()) {
        mean_ns_[s][k] = 0;
        continue;
      }
      TimeNs sum_ns = 0;
      for (TimeNs t : v) sum_ns += t;
      const auto count = static_cast<TimeNs>(v.size());
      mean_ns_[s][k] = (sum_ns + count / 2) / count;  // rounded to the nearest ns
    }
  }
}

TimeNs MeasuredCostModel::duration(const Action& action) const {
  return mean_ns_[action.stage][static_cast<int>(action.kind)];
}

namespace {

// The ops with their measured thread CPU time as their duration: what the means of PerOpCostModel read.
std::vector<ExecutedOp> with_cpu_durations(std::vector<ExecutedOp> ops) {
  for (ExecutedOp& op : ops) op.end_ns = op.start_ns + op.thread_cpu_ns;
  return ops;
}

}  // namespace

PerOpCostModel::PerOpCostModel(const std::vector<ExecutedOp>& ops, int stages,
                               const CostModel& memory_and_transfers)
    : MeasuredCostModel(with_cpu_durations(ops), stages, memory_and_transfers) {
  for (const ExecutedOp& op : ops) {
    op_ns_[{op.action.kind, op.action.stage, op.action.microbatch}] = std::max<TimeNs>(1, op.thread_cpu_ns);
  }
}

TimeNs PerOpCostModel::duration(const Action& action) const {
  const auto it = op_ns_.find({action.kind, action.stage, action.microbatch});
  return it != op_ns_.end() ? it->second : MeasuredCostModel::duration(action);
}

}  // namespace pipesim::executor
