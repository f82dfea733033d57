#pragma once
// The GEMMs of a transformer layer, what they count in FLOPs, the kernels a layer launches, and the model's
// parameters (docs/design.md §6). Per layer and microbatch of b samples of s tokens, hidden h, a query heads
// of size d (h/a unless the model says head_dim), k key/value heads (GQA; k = a is multi-head attention), MLP
// width f; P = the layer's matrix parameters:
//   params P = 2h·a·d + 2h·k·d (attention; latent attention: latent_attention.h) + 2h·f (GeLU MLP) or 3h·f
//   (SwiGLU MLP); 12h² for d = h/a, k = a,
//          f = 4h
//   FLOPs  F = 2sbP + 4s²b·ad, I = 2sbP + 8s²b·ad (+ 2s²b·ad: flash attention recomputes the scores),
//          W = 2sbP;
//          recomputation adds to I what it reruns (selective: eager attention's scores; full: all of F)
//   plus vocab·h for the embedding (first stage) and for the output layer (last stage); tied embeddings
//   share one matrix where both ends are on one stage, and keep a copy on each end otherwise (Megatron).
// b may be fractional: the mean size when a batch does not divide evenly.
#include <vector>

#include "cost_models/transformer/device.h"
#include "spec/transformer_model.h"

namespace pipesim {

// What the ops execute per layer and microbatch, recomputation included.
double layer_forward_flops(const TransformerModel& model, double microbatch_size);
double layer_backward_input_flops(const TransformerModel& model, double microbatch_size);
double layer_backward_weight_flops(const TransformerModel& model, double microbatch_size);
double layer_parameters(const TransformerModel& model);      // 12h²
double attention_parameters(const TransformerModel& model);  // 2h² + 2h·k·d
// One tensor-parallel rank's share of them: / t (latent attention keeps its down projections whole).
double attention_rank_parameters(const TransformerModel& model, int tp);
double mlp_parameters(const TransformerModel& model);  // 2hf or 3hf
// The whole model's parameters: layers (a MoE layer's every expert and its router), embedding, output layer
// (once when tied), final norm, multi-token prediction modules (mtp_modules.h).
double model_parameters(const TransformerModel& model);
// Those one token passes through: a MoE layer's top-k routed and its shared experts (equal to
// model_parameters for a dense model).
double active_parameters(const TransformerModel& model);
// Model FLOPs of one sample's forward and backward (no recomputation counted): what MFU divides by. A MoE
// layer counts the experts each token passes through (active parameters) and its router.
double model_flops_per_sample(const TransformerModel& model);

namespace transformer {

struct LayerShapes {
  std::vector<Gemm> forward, backward_input, backward_weight;
};
void append(std::vector<Gemm>& to, const std::vector<Gemm>& from);

// One tensor-parallel rank's share of a layer's GEMMs over `tp` ranks: the attention half (QKV, the batched
// products per head, the projection), the MLP half (up, down), both. `sp`: sequence parallelism, which
// only latent attention's down projections depend on (cost_models/transformer/latent_attention.h); the
// FLOPs a rank counts for MFU pass true (without it every rank repeats them).
LayerShapes attention_shapes(const TransformerModel& t, double b, int tp = 1, bool sp = false);
LayerShapes mlp_shapes(const TransformerModel& t, double b, int tp = 1);
LayerShapes layer_shapes(const TransformerModel& t, double b, int tp = 1, bool sp = false);

// The share of the s x s score tiles a flash kernel computes: all, or under a causal mask those on and below
// the diagonal of 128-row blocks.
double flash_work_share(const TransformerModel& t);

// The model without recomputation and with the scores counted once: the FLOPs a training step needs,
// whatever the implementation reruns (MFU's numerator, as Megatron and torchtitan count it).
TransformerModel without_recompute(TransformerModel t);

// Kernels a layer's half launches per op (forward, input gradient, weight gradient).
struct Kernels {
  double forward, backward_input, backward_weight;
};
Kernels attention_kernels(const TransformerModel& t);
Kernels mlp_kernels(const TransformerModel& t);

}  // namespace transformer
}  // namespace pipesim
