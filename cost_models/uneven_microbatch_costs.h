#pragma once
// A batch of B samples in m microbatches when m does not divide B: a microbatch holds whole samples, so the
// first B mod m microbatches of each batch hold ⌈B/m⌉ and the others ⌊B/m⌋ (as torch.tensor_split cuts a
// batch). Each op takes the time of its own microbatch's size; the memory a stage holds per microbatch and
// a transfer's bytes are the larger microbatch's (an upper bound: the engine holds one figure per stage).
#include <memory>

#include "sim/cost_model.h"

namespace pipesim {

class UnevenMicrobatchCostModel final : public CostModel {
 public:
  // `larger` prices microbatches of ⌈B/m⌉ samples, `smaller` those of ⌊B/m⌋; `larger_count` = B mod m of
  // every `microbatches` = m are the larger ones.
  UnevenMicrobatchCostModel(std::unique_ptr<CostModel> larger, std::unique_ptr<CostModel> smaller,
                            int larger_count, int microbatches);

  TimeNs duration(const Action& action) const override;
  TimeNs overlapped_duration(const Action& forward, const Action& backward) const override;
  TimeNs hideable_ns(const Action& action) const override;
  TimeNs before_barrier_ns(const Action& step) const override { return larger_->before_barrier_ns(step); }
  Bytes activation_bytes(int stage) const override { return larger_->activation_bytes(stage); }
  Bytes weight_grad_activation_bytes(int stage) const override {
    return larger_->weight_grad_activation_bytes(stage);
  }
  Bytes transfer_bytes(int stage) const override { return larger_->transfer_bytes(stage); }

  // Whether the op's microbatch is one of its batch's larger ones (an optimizer step counts as larger: its
  // time does not depend on the microbatch size).
  bool is_larger(const Action& action) const;
  const CostModel& larger() const { return *larger_; }
  const CostModel& smaller() const { return *smaller_; }

 private:
  std::unique_ptr<CostModel> larger_, smaller_;
  int larger_count_, microbatches_;
};

}  // namespace pipesim
