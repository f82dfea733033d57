#pragma once
// The bytes one microbatch leaves for the backward in a transformer layer (M_B) and holds from I to W (M_W),
// per layer and microbatch (docs/design.md §6: Korthikanti et al. 2022 for eager attention with dropout,
// M_B = s·b(34h + 5·a·s), M_W = 32·s·b·h, in 16-bit), less under flash attention and recomputation.
#include "spec/transformer_model.h"

namespace pipesim {

double layer_activation_bytes(const TransformerModel& model, double microbatch_size);              // M_B
double layer_weight_grad_activation_bytes(const TransformerModel& model, double microbatch_size);  // M_W
// Bytes one microbatch's activations take in a layer without recomputation (what element-wise kernels move).
double layer_full_activation_bytes(const TransformerModel& model, double microbatch_size);

namespace transformer {

// The model's dtype in 16-bit units (2 for fp32).
double scale_16bit(const TransformerModel& t);

// What one microbatch leaves for the backward in one half of a layer (docs/design.md §6), in bytes: stored
// under the model's recomputation, and full (without recomputation: what element-wise kernels move and what
// a full recompute rebuilds). Per token, in 16-bit units (scaled for fp32):
//   attention: norm input 2h, QKV input 2h, Q 2ad, K and V 2kd each, the context (projection input) 2ad
//              = 4h + 4ad + 4kd (8h + 4kd for d = h/a); eager adds the softmax 2as per token (and with
//              dropout its mask as and output 2as); flash stores the softmax statistics instead (4 bytes per
//              head, fp32); dropout adds the output's mask h.
//   MLP:       norm input 2h, up input 2h, then GeLU: its input and output 2f + 2f; SwiGLU: gate and up
//              outputs 4f and the down input 2f; dropout adds the output's mask h.
//   selective: no s-sized term; full: the attention half keeps the layer's input 2h, the MLP half nothing.
struct HalfBytes {
  double stored = 0;
  double full = 0;
};

// One tensor-parallel rank's share (tp ranks) of a layer half's bytes; sp: sequence parallelism.
HalfBytes attention_bytes(const TransformerModel& t, double b, int tp = 1, bool sp = false);
HalfBytes mlp_bytes(const TransformerModel& t, double b, int tp = 1, bool sp = false);
// One tensor-parallel rank's share of each weight GEMM's input and output gradient (M_W of a layer).
double weight_grad_activation_bytes(const TransformerModel& t, double b, int tp, bool sp);
// Its two halves' shares.
double attention_weight_grad_activation_bytes(const TransformerModel& t, double b, int tp, bool sp);
double mlp_weight_grad_activation_bytes(const TransformerModel& t, double b, int tp, bool sp);

}  // namespace transformer
}  // namespace pipesim
