#pragma once
// The units a balanced split places stage boundaries between, with what each costs: the embedding, each
// layer's attention half (first layer norm, QKV, attention, projection) and MLP half (second layer norm,
// MLP), the final layer norm and the output layer with the loss: 2·layers + 3 of them, in model order. A
// layer's two halves add up to the layer's F, I, W, M_B, M_W and parameters.
// Time of an op = Σ over its GEMMs of FLOPs / the profile's achieved rate at that GEMM's shape
//               + element-wise kernels (layer norm, softmax, dropout, GeLU, residual): passes·M_B / memory
//               bandwidth
//               + kernels launched · launch overhead.
// The shape dependence is what makes small microbatches slower per FLOP; it comes from the profile.
#include <vector>

#include "cost_models/transformer/device.h"
#include "spec/transformer_model.h"

namespace pipesim {

enum class UnitKind { kEmbedding, kAttention, kMlp, kFinalNorm, kOutput };  // kMlp: dense or MoE
struct UnitCosts {
  UnitKind kind = UnitKind::kEmbedding;
  int layer = -1;  // 0-based layer of an attention or MLP half
  double forward_s = 0, backward_input_s = 0, backward_weight_s = 0;
  double forward_comm_s = 0, backward_input_comm_s = 0;  // of which the expert all-to-alls
  double activation_bytes = 0, weight_grad_activation_bytes = 0;
  double full_activation_bytes = 0;  // without recomputation (the working set a full recompute rebuilds)
  double model_flops = 0;            // F + I + W without recomputation
  double matrix_params = 0;          // the layers' weight matrices (Muon orthogonalizes these)
  double expert_params = 0;          // a MoE half's routed experts (their own replicas: expert parallelism)
  double other_params = 0;           // embedding, output layer, final norm
  double matrix_optimizer_s = 0;  // Muon's Newton-Schulz or SOAP's rotations on this unit's matrices, a step
  double matrix_optimizer_bytes = 0;  // SOAP's preconditioners and bases for this unit's matrices
};
// Per microbatch of `microbatch_size` samples, each op's time scaled by the profile's op_time_scale.
std::vector<UnitCosts> transformer_units(const TransformerSetup& setup, double microbatch_size);

namespace transformer {

// Element-wise passes over the activations a layer part makes, forward and in I (a full recompute reruns the
// forward's inside I), in seconds: passes x the bytes without recomputation / bandwidth.
struct ElementwiseSeconds {
  double forward, backward_input;
};
ElementwiseSeconds elementwise_seconds(const TransformerModel& t, const Device& d, double full_bytes);

// Adds every cost and parameter of `from` to `to` (its kind and layer stay).
void add_to_unit(UnitCosts& to, const UnitCosts& from);
// The embedding and the output layer with the loss, for one rank's share b.
UnitCosts embedding_unit(const TransformerSetup& setup, const Device& d, double b);
UnitCosts output_unit(const TransformerSetup& setup, const Device& d, double b);
// The units of one rank's share b (a microbatch of b/c sequences under context parallelism), unscaled.
std::vector<UnitCosts> rank_units(const TransformerSetup& setup, double b);

// Each op kind's time times its measured factor (hardware.op_time_scale): units or stages alike.
template <typename Costs>
std::vector<Costs> scaled_op_times(std::vector<Costs> items, const OpTimeScale& scale) {
  for (Costs& c : items) {
    c.forward_s *= scale.forward;
    c.forward_comm_s *= scale.forward;
    c.backward_input_s *= scale.backward_input;
    c.backward_input_comm_s *= scale.backward_input;
    c.backward_weight_s *= scale.backward_weight;
  }
  return items;
}

}  // namespace transformer
}  // namespace pipesim
