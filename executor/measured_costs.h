#pragma once
// Per-op costs measured by an executor run, as a cost model: what replay mode's virtual clocks advance by
// when it predicts a real run. Durations are the mean per (op kind, stage), rounded to the ns: on a machine
// whose cores contend (shared caches, memory bandwidth, an SMT sibling under a VM's vCPU) the same op lasts
// 9 ms alone and 22 ms beside another, a bimodal spread whose median picks one mode, while the mean keeps
// each stage's total measured work. Memory and transfer figures come from another model.
#include <array>
#include <map>
#include <tuple>
#include <vector>

#include "executor/execution_result.h"
#include "sim/cost_model.h"

namespace pipesim::executor {

class MeasuredCostModel : public CostModel {
 public:
  MeasuredCostModel(const std::vector<ExecutedOp>& ops, int stages, const CostModel& memory_and_transfers);
  // 0 for a (kind, stage) that never ran.
  TimeNs duration(const Action& action) const override;
  Bytes activation_bytes(int stage) const override { return other_.activation_bytes(stage); }
  Bytes weight_grad_activation_bytes(int stage) const override {
    return other_.weight_grad_activation_bytes(stage);
  }
  Bytes transfer_bytes(int stage) const override { return other_.transfer_bytes(stage); }

 private:
  std::vector<std::array<TimeNs, kOpKinds>> mean_ns_;  // per stage, per op kind
  const CostModel& other_;
};

// Each op's own measured thread CPU time, keyed by (kind, stage, microbatch or step): the per-device virtual
// clocks of replay mode advance by what that very op cost, not by a mean, so the replayed timeline keeps
// the run's variation. An op the measuring run did not hold (a run-time rule chose differently) takes the
// mean CPU time of its (kind, stage).
class PerOpCostModel final : public MeasuredCostModel {
 public:
  PerOpCostModel(const std::vector<ExecutedOp>& ops, int stages, const CostModel& memory_and_transfers);
  TimeNs duration(const Action& action) const override;

 private:
  std::map<std::tuple<OpKind, int, int>, TimeNs> op_ns_;
};

}  // namespace pipesim::executor
