#pragma once
// What the transformer model derives for each (virtual) stage: its layers (or balanced units), op times,
// bytes, parameters and optimizer step (docs/design.md §6).
#include <string>
#include <vector>

#include "cost_models/transformer/device.h"
#include "cost_models/transformer/optimizer_work.h"
#include "cost_models/transformer/units.h"
#include "sim/limits.h"
#include "spec/transformer_model.h"

namespace pipesim {

// What the model derives for one (virtual) stage, per microbatch unless said otherwise.
struct StageCosts {
  int layers = 0;     // whole layers (balanced: both halves on this stage)
  std::string units;  // balanced: the units held, e.g. "emb 1-3 4a" (a/m: attention/MLP half); else empty
  bool embedding = false;  // first stage
  bool output = false;     // last stage: output layer and loss
  double forward_s = 0;
  double backward_input_s = 0;
  double backward_weight_s = 0;
  // Of forward_s and backward_input_s, the expert all-to-alls: communication another microbatch's compute
  // can hide when a schedule runs a forward and a backward in one slot (CostModel::overlapped_duration).
  double forward_comm_s = 0;
  double backward_input_comm_s = 0;
  double optimizer_s = 0;        // one step, its gradient reduction over the weights' replicas included
  double gradient_reduce_s = 0;  // of which the reduction
  // Of the reduction, what outlasts the stage's last gradient op when each unit's (layer's) gradients reduce
  // as that op makes them (overlap_grad_reduce): max(R / u, R - W (u - 1) / u) for u units, W = one
  // microbatch's weight-gradient time.
  double gradient_reduce_exposed_s = 0;
  double transfer_s = 0;  // one activation (or gradient) message to the next stage
  double parameters = 0;
  double expert_parameters = 0;  // of which routed experts' (a mixture of experts)
  double parameter_bytes = 0;    // one copy of the weights
  double gradient_bytes = 0;
  double optimizer_bytes = 0;               // optimizer state, including fp32 master weights
  double activation_bytes = 0;              // M_B
  double weight_grad_activation_bytes = 0;  // M_W
  double transfer_bytes = 0;
  // Full (op-level) recomputation: one layer's activations (those it dropped) rebuilt during a backward, held
  // while it runs.
  double recompute_working_bytes = 0;
  double model_flops = 0;  // F + I + W matmul FLOPs per microbatch without recomputation (for MFU)
};

// One stage of costs per (virtual) stage, per microbatch of `microbatch_size`, each op's time scaled by the
// profile's op_time_scale; a balanced split partitions the units (balanced_stages.h), every other split
// places whole layers (layer_split.h). `limits` bound the balanced split's search (default: the command
// line's default ceilings).
std::vector<StageCosts> transformer_stage_costs(const TransformerSetup& setup, double microbatch_size,
                                                int stages, const Limits& limits = {});
// The balanced split's first unit of each of `stages` stages for microbatches of `microbatch_size`.
std::vector<int> balanced_unit_starts(const TransformerSetup& setup, double microbatch_size, int stages,
                                      const Limits& limits = {});

namespace transformer {

// Adds a unit's op times, activation bytes and model FLOPs to the stage's (its parameters are the caller's).
void add_unit_costs(StageCosts& c, const UnitCosts& u);
// Parameters, their bytes, the optimizer's state and step time (with ZeRO's shards and the data-parallel
// gradient reduction), and the transfer to the next stage. Per GPU: the params given are one tensor-parallel
// rank's; `expert_params` are its routed experts' (a mixture of experts), whose replicas, gradient reduction
// and ZeRO shards are the expert-data-parallel group's.
void set_parameters_and_optimizer(StageCosts& c, const TransformerSetup& setup, const Device& d, double b,
                                  int stages, double matrix_params, double other_params,
                                  const MatrixOptimizerWork& matrix_work, double expert_params = 0);

}  // namespace transformer
}  // namespace pipesim
