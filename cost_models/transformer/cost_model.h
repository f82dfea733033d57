#pragma once
// The transformer's costs as the engine asks for them (sim/cost_model.h): each op's time and each stage's
// bytes, from the stages' costs (stage_costs.h) of a transformer on a hardware profile (docs/design.md §6).
#include <vector>

#include "cost_models/transformer/stage_costs.h"
#include "sim/cost_model.h"
#include "sim/layout.h"
#include "sim/limits.h"
#include "spec/transformer_model.h"

namespace pipesim {

class TransformerCostModel final : public CostModel {
 public:
  // One stage of costs per stage of the layout (virtual stages for interleaved schedules); `limits` bound
  // the balanced split's search.
  TransformerCostModel(const TransformerSetup& setup, double microbatch_size, const PipelineLayout& layout,
                       const Limits& limits = {});

  TimeNs duration(const Action& action) const override;
  bool durations_by_kind_and_stage() const override { return true; }
  // A forward and another microbatch's backward in one slot (DualPipe's overlapped chunks, Megatron's
  // combined 1F1B): the compute stream runs both ops' compute, the communication stream both ops' expert
  // all-to-alls, each hiding under the other: max(compute F + compute B, comm F + comm B) (the chunks'
  // interleaving taken as perfect; a model without all-to-alls gets the sum).
  TimeNs overlapped_duration(const Action& forward, const Action& backward) const override;
  // The op's expert all-to-alls (forward_comm_s, backward_input_comm_s): what a fused slot can hide.
  TimeNs hideable_ns(const Action& action) const override;
  // With parallel.overlap_grad_reduce: the stage's gradient reduction, which runs before the step's barrier.
  TimeNs before_barrier_ns(const Action& step) const override;
  Bytes activation_bytes(int stage) const override;
  Bytes weight_grad_activation_bytes(int stage) const override;
  Bytes transfer_bytes(int stage) const override;

  const std::vector<StageCosts>& stages() const { return stages_; }

 private:
  std::vector<StageCosts> stages_;
  double host_overhead_s_ = 0;  // per op: the profile's host_overhead_us
  bool overlap_grad_reduce_ = true;
};

}  // namespace pipesim
