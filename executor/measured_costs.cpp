#include "executor/measured_costs.h"

#include <algorithm>

namespace pipesim::executor {

MeasuredCostModel::MeasuredCostModel(const std::vector<ExecutedOp>& ops, int stages,
                                     const CostModel& memory_and_transfers)
    : mean_ns_(stages), other_(memory_and_transfers) {
  std::vector<std::array<TimeNs, kOpKinds>> sum_ns(stages), count(stages);
  for (const ExecutedOp& op : ops) {
    const int k = static_cast<int>(op.action.kind);
    sum_ns[op.action.stage][k] += op.end_ns - op.start_ns;
    ++count[op.action.stage][k];
  }
  for (int s = 0; s < stages; ++s) {
    for (int k = 0; k < kOpKinds; ++k) {
      const TimeNs n = count[s][k];
      mean_ns_[s][k] = n == 0 ? 0 : (sum_ns[s][k] + n / 2) / n;  // rounded to the nearest ns
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
