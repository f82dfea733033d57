#include "cost_models/transformer/latent_attention.h"

#include <algorithm>

namespace pipesim::transformer {
namespace {

// The attention's projection matrices in call order (Megatron's and torchtitan's): each a weight GEMM of
// `in` x `out` on `tokens_share` of the tokens (1/t for a down projection under sequence parallelism,
// else 1), `out` (or `in`) already one rank's share of the heads.
struct Projection {
  double in, out;
  bool duplicated;  // the down projections: every tensor-parallel rank holds them whole
};

std::vector<Projection> projections(const TransformerModel& t, int tp) {
  const LatentAttention& m = t.mla;
  const double h = t.hidden, a = t.heads, dq = m.query_head_width();
  std::vector<Projection> list;
  if (m.q_lora_rank > 0) {
    list.push_back({h, static_cast<double>(m.q_lora_rank), true});
    list.push_back({static_cast<double>(m.q_lora_rank), a * dq / tp, false});
  } else {
    list.push_back({h, a * dq / tp, false});
  }
  list.push_back({h, static_cast<double>(m.kv_lora_rank) + m.qk_rope_head_dim, true});
  list.push_back({static_cast<double>(m.kv_lora_rank), a * (m.qk_nope_head_dim + m.v_head_dim) / tp, false});
  list.push_back({a * m.v_head_dim / tp, h, false});
  return list;
}

// The tokens a projection runs over on one rank: a duplicated down projection over its T/t under
// sequence parallelism, else over all T.
double projection_tokens(const Projection& p, double tokens, int tp, bool sp) {
  return p.duplicated && sp ? tokens / tp : tokens;
}

}  // namespace

LayerShapes latent_attention_shapes(const TransformerModel& t, double b, int tp, bool sp) {
  const LatentAttention& m = t.mla;
  const double s = t.seq_len, tokens = s * b, batch = b * t.heads / tp, dq = m.query_head_width(),
               dv = m.v_head_dim;
  const double flash = t.attention == AttentionKind::kFlash ? flash_work_share(t) : 0;
  LayerShapes shapes;
  const std::vector<Projection> list = projections(t, tp);
  std::vector<Gemm> forward_projections;
  for (const Projection& p : list) {
    const double rows = projection_tokens(p, tokens, tp, sp);
    forward_projections.push_back({rows, p.out, p.in});
    shapes.backward_input.push_back({rows, p.in, p.out});
    shapes.backward_weight.push_back({p.in, p.out, rows});
  }
  const std::vector<Gemm> core = {{s, s, dq, batch, flash, true}, {s, dv, s, batch, flash, true}};
  shapes.forward = forward_projections;
  append(shapes.forward, core);
  // The core's backward: the probabilities' gradient (dO·Vᵀ), the values' (Pᵀ·dO), the queries' and keys'
  // (dS·K, dSᵀ·Q); flash attention recomputes the scores first.
  append(shapes.backward_input, {{s, s, dv, batch, flash, true},
                                 {s, dv, s, batch, flash, true},
                                 {s, dq, s, batch, flash, true},
                                 {s, dq, s, batch, flash, true}});
  if (t.attention == AttentionKind::kFlash) {
    shapes.backward_input.push_back({s, s, dq, batch, flash, true});
  } else if (t.recompute == Recompute::kSelective) {
    append(shapes.backward_input, core);
  }
  if (t.recompute == Recompute::kFull) append(shapes.backward_input, shapes.forward);
  // torchtitan's op-level policy reruns the even matmuls of the block (the 2nd, the 4th).
  if (t.recompute == Recompute::kOp) {
    for (size_t k = 1; k < forward_projections.size(); k += 2)
      shapes.backward_input.push_back(forward_projections[k]);
  }
  return shapes;
}

double latent_attention_parameters(const TransformerModel& t) {
  double params = 0;
  for (const Projection& p : projections(t, 1)) params += p.in * p.out;
  return params;
}

double latent_attention_rank_parameters(const TransformerModel& t, int tp) {
  double params = 0;
  for (const Projection& p : projections(t, tp)) params += p.in * p.out;
  return params;
}

HalfBytes latent_attention_bytes(const TransformerModel& t, double b, int tp, bool sp) {
  const LatentAttention& m = t.mla;
  const double h = t.hidden, a = t.heads, s = t.seq_len, tokens = s * b, scale = scale_16bit(t),
               replicated = sp ? 1.0 / tp : 1.0, dq = m.query_head_width(), dv = m.v_head_dim;
  const double latents = 4.0 * m.q_lora_rank + 4.0 * m.kv_lora_rank + 2.0 * m.qk_rope_head_dim;
  const double heads_bytes = (4 * a * dq + 4 * a * dv) / tp;  // Q, K, V, the context
  const double base =
      tokens * ((4 * h + (t.dropout ? h : 0)) * replicated + latents * replicated + heads_bytes) * scale;
  const double eager_scores = tokens * a * s * (t.dropout ? 5 : 2) * scale / tp;
  const double flash_statistics = 4 * tokens * a / tp;
  const double without_recompute =
      base + (t.attention == AttentionKind::kEager ? eager_scores : flash_statistics);
  HalfBytes bytes{without_recompute, without_recompute};
  if (t.recompute == Recompute::kSelective && t.attention == AttentionKind::kEager) bytes.stored = base;
  if (t.recompute == Recompute::kFull) bytes.stored = 2 * tokens * h * scale * replicated;
  if (t.recompute == Recompute::kOp) {
    // Kept: the block's input, the odd matmuls' outputs (1st, 3rd, 5th), the attention kernel's output and
    // its statistics (or, eager, its scores).
    const std::vector<Projection> list = projections(t, tp);
    double kept = 0;
    for (size_t k = 0; k < list.size(); k += 2)
      kept += 2 * list[k].out * (list[k].duplicated ? replicated : 1);
    bytes.stored = tokens * (2 * h * replicated + kept + 2 * a * dv / tp) * scale +
                   (t.attention == AttentionKind::kEager ? eager_scores : flash_statistics);
  }
  return bytes;
}

// Each projection's input and output gradient, held from I to W: 2 bytes x its tokens x (in + out).
double latent_attention_weight_grad_activation_bytes(const TransformerModel& t, double b, int tp, bool sp) {
  const double tokens = t.seq_len * b;
  double bytes = 0;
  for (const Projection& p : projections(t, tp)) {
    // The hidden-state side of a projection is split over the ranks with sequence parallelism, as in a
    // dense layer; a down projection runs on its share of the tokens.
    const double rows = projection_tokens(p, tokens, tp, sp);
    const double in = !p.duplicated && p.in == t.hidden && sp ? p.in / tp : p.in;
    const double out = p.out == t.hidden && sp ? p.out / tp : p.out;
    bytes += 2 * rows * (in + out);
  }
  return bytes * scale_16bit(t);
}

// As a dense flash layer's attention half (8, 10, 5 kernels), plus each extra projection (a dense layer
// has one QKV GEMM), the latents' norms and the rotary keys' concatenation.
Kernels latent_attention_kernels(const TransformerModel& t) {
  const double input_projections = t.mla.q_lora_rank > 0 ? 4 : 3;
  const double norms = t.mla.q_lora_rank > 0 ? 2 : 1;
  const double eager = t.attention == AttentionKind::kEager ? 3 : 0;
  Kernels k{8 + eager + (input_projections - 1) + norms + 1, 10 + eager + (input_projections - 1) + norms + 1,
            5 + (input_projections - 1)};
  if (t.recompute == Recompute::kFull) k.backward_input += k.forward;
  if (t.recompute == Recompute::kOp) k.backward_input += k.forward - std::ceil((input_projections + 1) / 2);
  return k;
}

MatrixShapes latent_attention_matrices(const TransformerModel& t) {
  MatrixShapes matrices;
  for (const Projection& p : projections(t, 1))
    matrices.push_back({std::min(p.in, p.out), std::max(p.in, p.out)});
  return matrices;
}

double latent_key_value_width(const TransformerModel& t) {
  return t.heads * (t.mla.query_head_width() + t.mla.v_head_dim);
}

}  // namespace pipesim::transformer
