#include "cost_models/pipeline_copies_costs.h"

#include <algorithm>
#include <utility>

namespace pipesim {

PipelineCopiesCostModel::PipelineCopiesCostModel(std::unique_ptr<CostModel> first_copy,
                                                 const PipelineLayout& layout)
    : base_(std::move(first_copy)), layout_(layout) {}

Action PipelineCopiesCostModel::in_first_copy(Action action) const {
  action.stage = layout_.model_stage(action.stage);
  return action;
}

TimeNs PipelineCopiesCostModel::duration(const Action& action) const {
  return base_->duration(in_first_copy(action));
}

// The pair on one device runs two different model stages (one of each copy), while a per-device overlap was
// given for one: the slot stays within what overlap can do for this pair, from the longer op to both.
TimeNs PipelineCopiesCostModel::overlapped_duration(const Action& forward, const Action& backward) const {
  const TimeNs forward_ns = duration(forward);
  const TimeNs backward_ns = duration(backward);
  const TimeNs slot_ns = base_->overlapped_duration(in_first_copy(forward), in_first_copy(backward));
  return std::clamp(slot_ns, std::max(forward_ns, backward_ns), forward_ns + backward_ns);
}

Bytes PipelineCopiesCostModel::activation_bytes(int stage) const {
  return base_->activation_bytes(layout_.model_stage(stage));
}

Bytes PipelineCopiesCostModel::weight_grad_activation_bytes(int stage) const {
  return base_->weight_grad_activation_bytes(layout_.model_stage(stage));
}

// Copy k's transfer out of stage s carries what the first copy's does: the boundary after model stage s for
// activations. A gradient into s-1 is asked as transfer_bytes(s-1) by the engine, the same boundary.
Bytes PipelineCopiesCostModel::transfer_bytes(int stage) const {
  return base_->transfer_bytes(layout_.model_stage(stage));
}

}  // namespace pipesim
