#include "cost_models/transformer/shapes_flops.h"

#include <cmath>

#include "cost_models/transformer/latent_attention.h"
#include "cost_models/transformer/moe_layer.h"
#include "cost_models/transformer/mtp_modules.h"

namespace pipesim {
namespace transformer {

// The share of the s x s score tiles a flash kernel computes: all of them, or with a causal mask the n(n+1)/2
// tiles on and below the diagonal of n = ceil(s / 128) (FlashAttention's 128-row blocks).
double flash_work_share(const TransformerModel& t) {
  if (!t.causal) return 1;
  const double n = std::ceil(t.seq_len / 128.0);
  return (n + 1) / (2 * n);
}

// Kernels one layer launches, as in Megatron-LM's GPT layer (no fusion beyond bias-GeLU and
// bias-dropout-add): the attention half (layer norm, QKV, scores, softmax, dropout, context, projection,
// bias-dropout-add and their backwards) 11 forward, 13 input-backward, 5 weight-backward kernels; flash
// attention fuses scores, softmax, dropout and context into one (3 fewer each way); the MLP half launches
// 6, 7 and 5. Full recomputation launches the forward again inside I.
Kernels attention_kernels(const TransformerModel& t) {
  if (t.mla.any()) return latent_attention_kernels(t);
  const double fused = t.attention == AttentionKind::kFlash ? 3 : 0;
  Kernels k{11 - fused, 13 - fused, 5};
  if (t.recompute == Recompute::kFull) k.backward_input += k.forward;
  if (t.recompute == Recompute::kOp) k.backward_input += k.forward - 2;  // all but the kept wq, wv
  return k;
}

Kernels mlp_kernels(const TransformerModel& t) {
  Kernels k{6, 7, 5};
  if (t.recompute == Recompute::kFull) k.backward_input += k.forward;
  if (t.recompute == Recompute::kOp) k.backward_input += k.forward - 2;  // all but the kept w1, w2
  return k;
}

void append(std::vector<Gemm>& to, const std::vector<Gemm>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

// The GEMMs of a layer's attention half: QKV (a query and k key/value heads of d: ad + 2kd wide), the batched
// GEMMs (per query head), the projection. Flash attention's backward recomputes the scores (one more
// batched GEMM); recomputation reruns in I what it dropped.
// With tensor parallelism over `tp` ranks, one rank's share: QKV column-parallel (output / tp), the
// projection row-parallel (input / tp), heads / tp.
LayerShapes attention_shapes(const TransformerModel& t, double b, int tp, bool sp) {
  if (t.mla.any()) return latent_attention_shapes(t, b, tp, sp);
  const double s = t.seq_len, h = t.hidden, tokens = s * b, d = t.head_size(), batch = b * t.heads / tp,
               qkv = (t.query_width() + 2.0 * t.key_value_width()) / tp, q_split = t.query_width() / tp;
  LayerShapes shapes;
  const std::vector<Gemm> projections = {{tokens, qkv, h}, {tokens, h, q_split}};
  const double flash = t.attention == AttentionKind::kFlash ? flash_work_share(t) : 0;
  const std::vector<Gemm> core = {{s, s, d, batch, flash, true}, {s, d, s, batch, flash, true}};
  shapes.forward = projections;
  append(shapes.forward, core);
  shapes.backward_input = {{tokens, h, qkv},
                           {tokens, q_split, h},
                           {s, s, d, batch, flash, true},
                           {s, d, s, batch, flash, true},
                           {s, d, s, batch, flash, true},
                           {s, d, s, batch, flash, true}};
  if (t.attention == AttentionKind::kFlash) {
    shapes.backward_input.push_back({s, s, d, batch, flash, true});
  } else if (t.recompute == Recompute::kSelective) {
    append(shapes.backward_input, core);
  }
  if (t.recompute == Recompute::kFull) append(shapes.backward_input, shapes.forward);
  // torchtitan's op-level policy reruns the even matmuls of the block: wk and wo.
  if (t.recompute == Recompute::kOp) {
    append(shapes.backward_input, {{tokens, t.key_value_width() / tp, h}, {tokens, h, q_split}});
  }
  shapes.backward_weight = {{h, qkv, tokens}, {q_split, h, tokens}};
  return shapes;
}

// The GEMMs of a layer's MLP half: up (gate and up fused for SwiGLU; column-parallel) and down
// (row-parallel).
LayerShapes mlp_shapes(const TransformerModel& t, double b, int tp) {
  const double h = t.hidden, tokens = t.seq_len * b, f = static_cast<double>(t.ffn()) / tp,
               up = t.mlp == MlpKind::kSwiglu ? 2 * f : f;
  LayerShapes shapes{{{tokens, up, h}, {tokens, h, f}},
                     {{tokens, h, up}, {tokens, f, h}},
                     {{h, up, tokens}, {f, h, tokens}}};
  if (t.recompute == Recompute::kFull) append(shapes.backward_input, shapes.forward);
  // torchtitan's op-level policy: the block's 6th matmul, w3 (SwiGLU's up half) or a GeLU MLP's down.
  if (t.recompute == Recompute::kOp) {
    shapes.backward_input.push_back(t.mlp == MlpKind::kSwiglu ? Gemm{tokens, f, h} : Gemm{tokens, h, f});
  }
  return shapes;
}

// The GEMMs of one layer: both halves.
LayerShapes layer_shapes(const TransformerModel& t, double b, int tp, bool sp) {
  LayerShapes shapes = attention_shapes(t, b, tp, sp);
  const LayerShapes mlp = mlp_shapes(t, b, tp);
  append(shapes.forward, mlp.forward);
  append(shapes.backward_input, mlp.backward_input);
  append(shapes.backward_weight, mlp.backward_weight);
  return shapes;
}

TransformerModel without_recompute(TransformerModel t) {
  t.recompute = Recompute::kNone;
  t.attention = AttentionKind::kEager;
  return t;
}

}  // namespace transformer

using transformer::flops;
using transformer::layer_shapes;
using transformer::without_recompute;

// What the ops execute, recomputation included (they are the GEMMs the time is charged for).
double layer_forward_flops(const TransformerModel& t, double b) {
  return flops(layer_shapes(t, b).forward);
}

double layer_backward_input_flops(const TransformerModel& t, double b) {
  return flops(layer_shapes(t, b).backward_input);
}

double layer_backward_weight_flops(const TransformerModel& t, double b) {
  return flops(layer_shapes(t, b).backward_weight);
}

double attention_parameters(const TransformerModel& t) {
  if (t.mla.any()) return transformer::latent_attention_parameters(t);
  const double h = t.hidden;
  return 2 * h * t.query_width() + 2 * h * t.key_value_width();
}

double attention_rank_parameters(const TransformerModel& t, int tp) {
  if (t.mla.any()) return transformer::latent_attention_rank_parameters(t, tp);
  return attention_parameters(t) / tp;
}

double mlp_parameters(const TransformerModel& t) {
  return (t.mlp == MlpKind::kSwiglu ? 3.0 : 2.0) * t.hidden * t.ffn();
}

double layer_parameters(const TransformerModel& t) {
  return attention_parameters(t) + mlp_parameters(t);
}

namespace {

// The model's parameters with each MoE layer's MLP counted as `moe_mlp` of them.
double parameters_with(const TransformerModel& t, double moe_mlp) {
  const double embedding = static_cast<double>(t.vocab) * t.hidden;
  const int moe_layers = t.moe_layers();
  return (t.layers - moe_layers) * layer_parameters(t) + moe_layers * (attention_parameters(t) + moe_mlp) +
         embedding * (t.tied_embeddings ? 1 : 2) + t.norm_parameters();
}

double phases_flops(const transformer::LayerShapes& shapes) {
  return flops(shapes.forward) + flops(shapes.backward_input) + flops(shapes.backward_weight);
}

}  // namespace

double model_parameters(const TransformerModel& t) {
  return parameters_with(t, t.moe.any() ? transformer::moe_mlp_parameters(t) : 0) +
         transformer::mtp_parameters(t, false);
}

double active_parameters(const TransformerModel& t) {
  return parameters_with(t, t.moe.any() ? transformer::moe_active_mlp_parameters(t) : 0) +
         transformer::mtp_parameters(t, true);
}

double model_flops_per_sample(const TransformerModel& t) {
  const TransformerModel counted = without_recompute(t);
  const double tokens = t.seq_len, output = 2.0 * tokens * t.hidden * t.vocab;
  const int moe_layers = t.moe_layers();
  const double moe_layer =
      moe_layers > 0 ? phases_flops(transformer::attention_shapes(counted, 1)) +
                           phases_flops(transformer::moe_shapes(counted, 1, transformer::ExpertLayout{}))
                     : 0;
  return (t.layers - moe_layers) * phases_flops(layer_shapes(counted, 1)) + moe_layers * moe_layer +
         3 * output + transformer::mtp_model_flops_per_sample(t);
}

}  // namespace pipesim
