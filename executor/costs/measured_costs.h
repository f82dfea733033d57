#pragma once
// Per-op costs measured by an executor run, as a cost model: what replay mode's virtual clocks advance by
// when it predicts a real run. Durations are the mean per (op kind, stage), rounded to the ns: on a machine
// whose cores contend (shared caches, memory bandwidth, an SMT sibling under a VM's vCPU) the same op lasts
// 9 ms alone and 22 ms beside another, a bimodal spread whose median picks one mode, while the mean keeps
// each stage's total measured work. Memory and transfer figures come from another model.
#include <array>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "executor/execution_result.h"
#include "sim/cost_model.h"

namespace pipesim::executor {

// Durations measured by a run; memory and transfer figures from another model.
class MemoryAndTransfersFrom : public CostModel {
 public:
  explicit MemoryAndTransfersFrom(const CostModel& other) : other_(other) {}
  Bytes activation_bytes(int stage) const override { return other_.activation_bytes(stage); }
  Bytes weight_grad_activation_bytes(int stage) const override {
    return other_.weight_grad_activation_bytes(stage);
  }
  Bytes transfer_bytes(int stage) const override { return other_.transfer_bytes(stage); }

 private:
  const CostModel& other_;
};

class MeasuredCostModel : public MemoryAndTransfersFrom {
 public:
  MeasuredCostModel(const std::vector<ExecutedOp>& ops, int stages, const CostModel& memory_and_transfers);
  // 0 for a (kind, stage) that never ran.
  TimeNs duration(const Action& action) const override;
  bool durations_by_kind_and_stage() const override { return true; }

 private:
  std::vector<std::array<TimeNs, kOpKinds>> mean_ns_;  // per stage, per op kind
};

// Each op's own measured thread CPU time, keyed by (kind, stage, microbatch or step): the per-device virtual
// clocks of replay mode advance by what that very op cost, not by a mean, so the replayed timeline keeps
// the run's variation. An op the measuring run did not hold (a run-time rule chose differently) takes the
// mean CPU time of its (kind, stage).
class PerOpCostModel final : public MeasuredCostModel {
 public:
  PerOpCostModel(const std::vector<ExecutedOp>& ops, int stages, const CostModel& memory_and_transfers);
  TimeNs duration(const Action& action) const override;
  bool durations_by_kind_and_stage() const override { return false; }

 private:
  std::map<std::tuple<OpKind, int, int>, TimeNs> op_ns_;
};

// The run's per-op durations as a distribution per (op kind, stage): each op of a prediction draws one of
// its (kind, stage)'s measured durations, picked by a hash of the op and the seed (deterministic in any
// order the engine asks). A pipeline pays for op-to-op variation: a device waits for the slowest of its
// inputs, so a timeline of means runs short of one with the same means and the measured spread. Sampling
// carries the spread without reading any op's own time.
class ResampledCostModel final : public MemoryAndTransfersFrom {
 public:
  ResampledCostModel(const std::vector<ExecutedOp>& ops, int stages, const CostModel& memory_and_transfers,
                     std::uint64_t seed = 0);
  // 0 for a (kind, stage) that never ran.
  TimeNs duration(const Action& action) const override;

 private:
  std::vector<std::array<std::vector<TimeNs>, kOpKinds>> samples_ns_;  // per stage, per op kind, sorted
  std::uint64_t seed_;
};

}  // namespace pipesim::executor
