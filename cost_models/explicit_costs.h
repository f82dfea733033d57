#pragma once
// Costs typed in by the user: per-microbatch times of each device (one value for all or one per device).
// With v chunks per device, a device's times and activation bytes are split evenly over its chunks.
#include <optional>
#include <vector>

#include "sim/cost_model.h"
#include "sim/layout.h"
#include "spec/explicit_cost_table.h"

namespace pipesim {

class ExplicitCostModel final : public CostModel {
 public:
  ExplicitCostModel(ExplicitCostTable table, const PipelineLayout& layout);

  TimeNs duration(const Action& action) const override;
  bool durations_by_kind_and_stage() const override { return true; }
  TimeNs overlapped_duration(const Action& forward, const Action& backward) const override;
  Bytes activation_bytes(int stage) const override;
  Bytes weight_grad_activation_bytes(int stage) const override;
  Bytes transfer_bytes(int stage) const override;

  const ExplicitCostTable& table() const { return table_; }

 private:
  int device(int stage) const { return layout_.device_of_stage[stage]; }
  TimeNs per_chunk(TimeNs device_ns) const { return device_ns / layout_.chunks_per_device; }

  ExplicitCostTable table_;
  PipelineLayout layout_;
};

}  // namespace pipesim
