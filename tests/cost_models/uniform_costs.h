#pragma once
// Explicit costs for tests of hand-built plans: the same F, B and U on every device.
#include "base/units.h"
#include "cost_models/explicit_costs.h"
#include "sim/layout.h"

namespace pipesim::test {

// Per-device costs in ms for a hand-built plan on `layout` (one value for every device).
inline ExplicitCostModel uniform_costs(const PipelineLayout& layout, double forward_ms, double backward_ms,
                                       double optimizer_ms = 0) {
  const auto n = static_cast<size_t>(layout.devices);
  ExplicitCostTable table;
  table.forward_ns.assign(n, ms_to_ns(forward_ms));
  table.backward_input_ns.assign(n, ms_to_ns(backward_ms));
  table.backward_weight_ns.assign(n, 0);
  table.optimizer_ns.assign(n, ms_to_ns(optimizer_ms));
  table.activation_bytes.assign(n, 1);
  table.weight_grad_activation_bytes.assign(n, 0);
  table.transfer_bytes.assign(n, 0);
  return ExplicitCostModel(table, layout);
}

}  // namespace pipesim::test
