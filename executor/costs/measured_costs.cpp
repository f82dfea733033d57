#include "executor/costs/measured_costs.h"

#include <algorithm>

#include "executor/counter_rng.h"

namespace pipesim::executor {

MeasuredCostModel::MeasuredCostModel(const std::vector<ExecutedOp>& ops, int stages,
                                     const CostModel& memory_and_transfers)
    : MemoryAndTransfersFrom(memory_and_transfers), mean_ns_(stages) {
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

ResampledCostModel::ResampledCostModel(const std::vector<ExecutedOp>& ops, int stages,
                                       const CostModel& memory_and_transfers, std::uint64_t seed)
    : MemoryAndTransfersFrom(memory_and_transfers), samples_ns_(stages), seed_(seed) {
  for (const ExecutedOp& op : ops)
    samples_ns_[op.action.stage][static_cast<int>(op.action.kind)].push_back(op.end_ns - op.start_ns);
  for (auto& per_kind : samples_ns_)
    for (std::vector<TimeNs>& samples : per_kind) std::sort(samples.begin(), samples.end());
}

TimeNs ResampledCostModel::duration(const Action& action) const {
  const std::vector<TimeNs>& samples = samples_ns_[action.stage][static_cast<int>(action.kind)];
  if (samples.empty()) return 0;
  const std::uint64_t key =
      hash_key({seed_, static_cast<std::uint64_t>(action.kind), static_cast<std::uint64_t>(action.stage),
                static_cast<std::uint64_t>(static_cast<std::uint32_t>(action.microbatch))});
  return samples[key % samples.size()];
}

}  // namespace pipesim::executor
