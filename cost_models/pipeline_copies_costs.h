#pragma once
// Costs of a layout that runs copies of the model side by side (PipelineLayout::pipelines > 1, DualPipe,
// Chimera): every copy's stage k costs what stage k of the first copy costs, wherever it is placed. The base
// model is built for the first copy alone (PipelineLayout::first_pipeline).
#include <memory>

#include "sim/cost_model.h"
#include "sim/layout.h"

namespace pipesim {

class PipelineCopiesCostModel final : public CostModel {
 public:
  PipelineCopiesCostModel(std::unique_ptr<CostModel> first_copy, const PipelineLayout& layout);

  TimeNs duration(const Action& action) const override;
  bool durations_by_kind_and_stage() const override { return base_->durations_by_kind_and_stage(); }
  TimeNs overlapped_duration(const Action& forward, const Action& backward) const override;
  TimeNs hideable_ns(const Action& action) const override {
    return base_->hideable_ns(in_first_copy(action));
  }
  TimeNs before_barrier_ns(const Action& step) const override {
    return base_->before_barrier_ns(in_first_copy(step));
  }
  Bytes activation_bytes(int stage) const override;
  Bytes weight_grad_activation_bytes(int stage) const override;
  Bytes transfer_bytes(int stage) const override;

 private:
  Action in_first_copy(Action action) const;

  std::unique_ptr<CostModel> base_;
  PipelineLayout layout_;
};

}  // namespace pipesim
