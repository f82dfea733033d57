#include "cost_models/explicit_costs.h"

namespace pipesim {

ExplicitCostModel::ExplicitCostModel(ExplicitCostTable table, const PipelineLayout& layout)
    : table_(std::move(table)), layout_(layout) {}

TimeNs ExplicitCostModel::duration(const Action& action) const {
  const int d = device(action.stage);
  switch (action.kind) {
    case OpKind::F:
      return per_chunk(table_.forward_ns[d]);
    case OpKind::B:
      return per_chunk(table_.backward_input_ns[d] + table_.backward_weight_ns[d]);
    case OpKind::I:
      return per_chunk(table_.backward_input_ns[d]);
    case OpKind::W:
      return per_chunk(table_.backward_weight_ns[d]);
    case OpKind::U:
      return per_chunk(table_.optimizer_ns[d]);
  }
  return 0;
}

TimeNs ExplicitCostModel::overlapped_duration(const Action& forward, const Action& backward) const {
  if (table_.overlap_fb_ns.empty()) return CostModel::overlapped_duration(forward, backward);
  return per_chunk(table_.overlap_fb_ns[device(forward.stage)]);
}

Bytes ExplicitCostModel::activation_bytes(int stage) const {
  return table_.activation_bytes[device(stage)] / layout_.chunks_per_device;
}

Bytes ExplicitCostModel::weight_grad_activation_bytes(int stage) const {
  return table_.weight_grad_activation_bytes[device(stage)] / layout_.chunks_per_device;
}

Bytes ExplicitCostModel::transfer_bytes(int stage) const {
  return table_.transfer_bytes[device(stage)];
}

}  // namespace pipesim
