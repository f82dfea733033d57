#pragma once
// A cost model whose optimizer steps each carry a gradient reduction that runs before the step's barrier
// (CostModel::before_barrier_ns): for the tests that hold the engine and the fast timers equal.
#include <vector>

#include "sim/cost_model.h"

namespace pipesim::test {

class WithReductionsBeforeBarrier final : public CostModel {
 public:
  // reduce_ns[stage % size]: the reduction of each (virtual) stage, added to its step.
  WithReductionsBeforeBarrier(const CostModel& base, std::vector<TimeNs> reduce_ns)
      : base_(base), reduce_ns_(std::move(reduce_ns)) {}
  TimeNs duration(const Action& a) const override { return base_.duration(a) + reduction(a); }
  TimeNs before_barrier_ns(const Action& a) const override { return reduction(a); }
  bool durations_by_kind_and_stage() const override { return base_.durations_by_kind_and_stage(); }
  TimeNs overlapped_duration(const Action& f, const Action& b) const override {
    return base_.overlapped_duration(f, b);
  }
  Bytes activation_bytes(int stage) const override { return base_.activation_bytes(stage); }
  Bytes weight_grad_activation_bytes(int stage) const override {
    return base_.weight_grad_activation_bytes(stage);
  }
  Bytes transfer_bytes(int stage) const override { return base_.transfer_bytes(stage); }

 private:
  TimeNs reduction(const Action& a) const {
    if (a.kind != OpKind::U || reduce_ns_.empty()) return 0;
    return reduce_ns_[static_cast<size_t>(a.stage) % reduce_ns_.size()];
  }
  const CostModel& base_;
  std::vector<TimeNs> reduce_ns_;
};

}  // namespace pipesim::test
