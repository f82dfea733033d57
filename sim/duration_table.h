#pragma once
// The F, B, I and W durations of every stage for microbatches [0, microbatches), read once from a cost
// model: for searches that time many lists made of the same ops (the Zero Bubble search), so each op's
// duration is a table read instead of the model's arithmetic. Anything else (optimizer steps,
// microbatches beyond the table) and all memory questions go to the model.
#include <vector>

#include "sim/cost_model.h"

namespace pipesim {

class DurationTable final : public CostModel {
 public:
  DurationTable(const CostModel& costs, int stages, int microbatches);

  TimeNs duration(const Action& action) const override {
    if (action.kind != OpKind::U && action.stage >= 0 && action.stage < stages_ && action.microbatch >= 0 &&
        action.microbatch < microbatches_)
      return duration_ns_[index(action.kind, action.stage, action.microbatch)];
    return costs_.duration(action);
  }
  bool durations_by_kind_and_stage() const override { return costs_.durations_by_kind_and_stage(); }
  TimeNs before_barrier_ns(const Action& step) const override { return costs_.before_barrier_ns(step); }
  Bytes activation_bytes(int stage) const override { return costs_.activation_bytes(stage); }
  Bytes weight_grad_activation_bytes(int stage) const override {
    return costs_.weight_grad_activation_bytes(stage);
  }
  Bytes transfer_bytes(int stage) const override { return costs_.transfer_bytes(stage); }

 private:
  static constexpr int kKinds = 4;  // F, B, I, W
  size_t index(OpKind kind, int stage, int microbatch) const {
    // A stage's microbatches side by side: a device reads them in order.
    return (static_cast<size_t>(stage) * microbatches_ + microbatch) * kKinds + static_cast<size_t>(kind);
  }

  const CostModel& costs_;
  int stages_;
  int microbatches_;
  std::vector<TimeNs> duration_ns_;
};

}  // namespace pipesim
