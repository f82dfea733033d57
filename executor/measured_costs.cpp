#include "executor/measured_costs.h"

#include <algorithm>

namespace pipesim::executor {

MeasuredCostModel::MeasuredCostModel(const std::vector<ExecutedOp>& ops, int stages,
                                     const CostModel& memory_and_transfers)
    : median_ns_(stages), other_(memory_and_transfers) {
  std::vector<std::array<std::vector<TimeNs>, kOpKinds>> samples(stages);
  for (const ExecutedOp& op : ops) {
    samples[op.action.stage][static_cast<int>(op.action.kind)].push_back(op.end_ns - op.start_ns);
  }
  for (int s = 0; s < stages; ++s) {
    for (int k = 0; k < kOpKinds; ++k) {
      std::vector<TimeNs>& v = samples[s][k];
      if (v.empty()) {
        median_ns_[s][k] = 0;
        continue;
      }
      const auto middle = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
      std::nth_element(v.begin(), middle, v.end());
      median_ns_[s][k] = *middle;
    }
  }
}

TimeNs MeasuredCostModel::duration(const Action& action) const {
  return median_ns_[action.stage][static_cast<int>(action.kind)];
}

namespace {

// The ops with their measured thread CPU time as their duration: what the medians of PerOpCostModel read.
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
