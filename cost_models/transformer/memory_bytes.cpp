#include "cost_models/transformer/memory_bytes.h"

#include "cost_models/transformer/latent_attention.h"

namespace pipesim {
namespace transformer {

double scale_16bit(const TransformerModel& t) {
  return dtype_bytes(t.dtype) / 2.0;
}

// One tensor-parallel rank's share (tp ranks): what the split GEMMs produce (Q, K, V, the context, the
// scores, the MLP's inner activations) / tp; the rest (norm inputs, the QKV and up inputs, dropout masks)
// whole on every rank, or / tp too with sequence parallelism (sp).
HalfBytes attention_bytes(const TransformerModel& t, double b, int tp, bool sp) {
  if (t.mla.any()) return latent_attention_bytes(t, b, tp, sp);
  const double s = t.seq_len, h = t.hidden, a = t.heads, tokens = s * b, scale = scale_16bit(t);
  const double ad = t.query_width(), kd = t.key_value_width(), replicated = sp ? 1.0 / tp : 1.0;
  const double base = tokens * ((4 * h + (t.dropout ? h : 0)) * replicated + (4 * ad + 4 * kd) / tp) * scale;
  const double eager_scores = tokens * a * s * (t.dropout ? 5 : 2) * scale / tp;
  const double flash_statistics = 4 * tokens * a / tp;
  const double without_recompute =
      base + (t.attention == AttentionKind::kEager ? eager_scores : flash_statistics);
  HalfBytes bytes{without_recompute, without_recompute};
  if (t.recompute == Recompute::kSelective && t.attention == AttentionKind::kEager) {
    // The scores are rebuilt from Q and K; the dropout masks come back from the saved RNG state.
    bytes.stored = base;
  }
  if (t.recompute == Recompute::kFull) bytes.stored = 2 * tokens * h * scale * replicated;
  if (t.recompute == Recompute::kOp) {
    // Kept: the block's input, the query and value projections' outputs (wq, wv: the odd matmuls), the
    // attention kernel's output and its statistics (or, eager, its scores).
    bytes.stored = tokens * (2 * h * replicated + 2 * (2 * ad + kd) / tp) * scale +
                   (t.attention == AttentionKind::kEager ? eager_scores : flash_statistics);
  }
  return bytes;
}

HalfBytes mlp_bytes(const TransformerModel& t, double b, int tp, bool sp) {
  const double h = t.hidden, f = t.ffn(), tokens = t.seq_len * b, scale = scale_16bit(t);
  const double replicated = sp ? 1.0 / tp : 1.0;
  const double per_token =
      (4 * h + (t.dropout ? h : 0)) * replicated + (t.mlp == MlpKind::kSwiglu ? 6 * f : 4 * f) / tp;
  const double without_recompute = tokens * per_token * scale;
  if (t.recompute == Recompute::kOp) {
    // Kept: w1's output (SwiGLU's gate; a GeLU MLP's up projection) and w2's (the down projection), the odd
    // matmuls of the block; w3, the activation and the products are rebuilt.
    const double kept = t.mlp == MlpKind::kSwiglu ? 2 * f / tp + 2 * h * replicated : 2 * f / tp;
    return {tokens * kept * scale, without_recompute};
  }
  return {t.recompute == Recompute::kFull ? 0.0 : without_recompute, without_recompute};
}

// One tensor-parallel rank's share of each weight GEMM's input and output gradient (as attention_bytes
// divides them).
double attention_weight_grad_activation_bytes(const TransformerModel& t, double b, int tp, bool sp) {
  if (t.mla.any()) return latent_attention_weight_grad_activation_bytes(t, b, tp, sp);
  const double h = t.hidden, ad = t.query_width(), kd = t.key_value_width(), tokens = t.seq_len * b;
  const double whole = sp ? h / tp : h;
  return 2 * tokens * ((whole + (ad + 2 * kd) / tp) + (ad / tp + whole)) * scale_16bit(t);  // QKV, projection
}

double mlp_weight_grad_activation_bytes(const TransformerModel& t, double b, int tp, bool sp) {
  const double h = t.hidden, f = t.ffn(), tokens = t.seq_len * b;
  const double whole = sp ? h / tp : h;
  const double mlp = t.mlp == MlpKind::kSwiglu ? (whole + 2 * f / tp) + (f / tp + whole)
                                               : (whole + f / tp) + (f / tp + whole);
  return 2 * tokens * mlp * scale_16bit(t);
}

double weight_grad_activation_bytes(const TransformerModel& t, double b, int tp, bool sp) {
  return attention_weight_grad_activation_bytes(t, b, tp, sp) +
         mlp_weight_grad_activation_bytes(t, b, tp, sp);
}

}  // namespace transformer

using transformer::attention_bytes;
using transformer::mlp_bytes;
using transformer::weight_grad_activation_bytes;

double layer_activation_bytes(const TransformerModel& t, double b) {
  return attention_bytes(t, b).stored + mlp_bytes(t, b).stored;
}

double layer_full_activation_bytes(const TransformerModel& t, double b) {
  return attention_bytes(t, b).full + mlp_bytes(t, b).full;
}

// Each weight GEMM's input and output gradient, held from I to W: Σ 2 bytes x tokens x (in + out) over the
// layer's matrices (32·s·b·h for k = a, f = 4h, GeLU: the Zero Bubble paper's figure).
double layer_weight_grad_activation_bytes(const TransformerModel& t, double b) {
  return weight_grad_activation_bytes(t, b, 1, false);
}

}  // namespace pipesim
