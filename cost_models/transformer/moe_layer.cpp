#include "cost_models/transformer/moe_layer.h"

#include <algorithm>

namespace pipesim::transformer {
namespace {

// One expert's up and down widths on a tensor rank: SwiGLU's gate and up fused (2f), GeLU's up (f).
struct ExpertWidths {
  double up, down;
};
ExpertWidths widths(const TransformerModel& t, double f) {
  return {t.mlp == MlpKind::kSwiglu ? 2 * f : f, f};
}

// The MLP's GEMMs of `tokens` rows at inner width f (per rank), `count` of them (a grouped GEMM).
void append_mlp(LayerShapes& shapes, const TransformerModel& t, double tokens, double f, double count) {
  if (tokens <= 0 || f <= 0 || count <= 0) return;
  const double h = t.hidden;
  const ExpertWidths w = widths(t, f);
  append(shapes.forward, {{tokens, w.up, h, count}, {tokens, h, w.down, count}});
  append(shapes.backward_input, {{tokens, h, w.up, count}, {tokens, w.down, h, count}});
  append(shapes.backward_weight, {{h, w.up, tokens, count}, {w.down, h, tokens, count}});
  if (t.recompute == Recompute::kFull) {
    append(shapes.backward_input, {{tokens, w.up, h, count}, {tokens, h, w.down, count}});
  }
  // torchtitan's op-level policy reruns the even matmul: w3 (SwiGLU's up half) or a GeLU MLP's down.
  if (t.recompute == Recompute::kOp) {
    shapes.backward_input.push_back(t.mlp == MlpKind::kSwiglu ? Gemm{tokens, f, h, count}
                                                              : Gemm{tokens, h, f, count});
  }
}

double mlp_inner_bytes_per_token(const TransformerModel& t, double f) {
  return t.mlp == MlpKind::kSwiglu ? 6 * f : 4 * f;
}

}  // namespace

double ExpertLayout::copies(const TransformerModel& t, double tokens) const {
  return tokens * t.moe.experts_per_token * load * expert_tensor / tensor;
}

ExpertLayout expert_layout(const TransformerSetup& setup) {
  const ParallelConfig& p = setup.parallel;
  // Without expert parallelism every rank holds every expert and computes exactly its own tokens' k copies:
  // how unevenly they spread over the experts changes no rank's work.
  return {p.tensor, p.expert_tensor_size(), p.expert, p.expert > 1 ? setup.model.moe.routed_load() : 1.0};
}

int expert_ffn(const TransformerModel& t) {
  return t.moe.expert_ffn_hidden > 0 ? t.moe.expert_ffn_hidden : t.ffn();
}

TransformerModel expert_model(const TransformerModel& t) {
  TransformerModel e = t;
  e.ffn_hidden = expert_ffn(t);
  return e;
}

double moe_mlp_parameters(const TransformerModel& t) {
  const double router = static_cast<double>(t.hidden) * t.moe.experts;
  return router + (t.moe.experts + t.moe.shared_experts) * mlp_parameters(expert_model(t));
}

double moe_active_mlp_parameters(const TransformerModel& t) {
  const double router = static_cast<double>(t.hidden) * t.moe.experts;
  return router + (t.moe.experts_per_token + t.moe.shared_experts) * mlp_parameters(expert_model(t));
}

double moe_rank_expert_parameters(const TransformerModel& t, const ExpertLayout& layout) {
  return static_cast<double>(t.moe.experts) / layout.expert * mlp_parameters(expert_model(t)) /
         layout.expert_tensor;
}

double moe_rank_other_parameters(const TransformerModel& t, int tp) {
  return static_cast<double>(t.hidden) * t.moe.experts +
         t.moe.shared_experts * mlp_parameters(expert_model(t)) / tp;
}

LayerShapes moe_shapes(const TransformerModel& t, double b, const ExpertLayout& layout) {
  const double tokens = t.seq_len * b, h = t.hidden, experts = t.moe.experts,
               local_experts = experts / layout.expert,
               f = expert_ffn(t) / static_cast<double>(layout.expert_tensor),
               shared_f = t.moe.shared_experts * expert_ffn(t) / static_cast<double>(layout.tensor);
  LayerShapes shapes;
  shapes.forward = {{tokens, experts, h}};
  shapes.backward_input = {{tokens, h, experts}};
  shapes.backward_weight = {{h, experts, tokens}};
  if (t.recompute == Recompute::kFull) shapes.backward_input.push_back({tokens, experts, h});
  // The rank's routed copies spread over its E/e experts.
  const double copies = layout.copies(t, tokens);
  append_mlp(shapes, t, copies / local_experts, f, local_experts);
  append_mlp(shapes, t, tokens, shared_f, 1);
  return shapes;
}

HalfBytes moe_bytes(const TransformerModel& t, double b, const ExpertLayout& layout, bool sp) {
  const int tp = layout.tensor;
  const double h = t.hidden, tokens = t.seq_len * b, scale = scale_16bit(t), replicated = sp ? 1.0 / tp : 1.0,
               f = expert_ffn(t) / static_cast<double>(layout.expert_tensor),
               shared_f = t.moe.shared_experts * expert_ffn(t) / static_cast<double>(tp);
  const double copies = layout.copies(t, tokens);
  const double per_token = (4 * h + (t.dropout ? h : 0)) * replicated * scale + 4.0 * t.moe.experts +
                           mlp_inner_bytes_per_token(t, shared_f) * scale;
  const double per_copy = (4 * h + mlp_inner_bytes_per_token(t, f)) * scale;
  const double full = tokens * per_token + copies * per_copy;
  if (t.recompute == Recompute::kFull) return {0, full};
  if (t.recompute == Recompute::kOp) {
    // As the dense MLP: w1's and w2's outputs of every expert kept, the router's probabilities too.
    const auto kept = [&](double width) { return t.mlp == MlpKind::kSwiglu ? 2 * width + 2 * h : 2 * width; };
    return {tokens * (4.0 * t.moe.experts + kept(shared_f) * scale) + copies * kept(f) * scale, full};
  }
  return {full, full};
}

double moe_weight_grad_activation_bytes(const TransformerModel& t, double b, const ExpertLayout& layout,
                                        bool sp) {
  const int tp = layout.tensor;
  const double h = t.hidden, tokens = t.seq_len * b,
               f = expert_ffn(t) / static_cast<double>(layout.expert_tensor), whole = sp ? h / tp : h,
               copies = layout.copies(t, tokens),
               shared_f = t.moe.shared_experts * expert_ffn(t) / static_cast<double>(tp);
  const auto mlp = [&](double rows_h, double width) {
    const ExpertWidths w = widths(t, width);
    return (rows_h + w.up) + (w.down + rows_h);
  };
  const double router = whole + t.moe.experts;
  const double shared = t.moe.shared_experts > 0 ? mlp(whole, shared_f) : 0;
  return 2 * (tokens * (router + shared) + copies * mlp(h, f)) * scale_16bit(t);
}

// The dense MLP's kernels for the experts (one grouped launch each) and for the shared experts, plus the
// router's GEMM, softmax and top-k, and the permutation before and after the experts (and their backwards).
Kernels moe_kernels(const TransformerModel& t) {
  const Kernels mlp = mlp_kernels(t);
  const double shared = t.moe.shared_experts > 0 ? 1 : 0;
  Kernels k{mlp.forward * (1 + shared) + 5, mlp.backward_input * (1 + shared) + 5,
            mlp.backward_weight * (1 + shared) + 1};
  if (t.recompute == Recompute::kFull || t.recompute == Recompute::kOp) k.backward_input += 5;
  return k;
}

MatrixShapes moe_matrices(const TransformerModel& t, int ep) {
  const MatrixShapes expert = mlp_matrices(expert_model(t));
  const double h = t.hidden, experts = t.moe.experts;
  MatrixShapes out = {{std::min(h, experts), std::max(h, experts)}};
  const int count = t.moe.experts / ep + t.moe.shared_experts;
  for (int i = 0; i < count; ++i) out.insert(out.end(), expert.begin(), expert.end());
  return out;
}

double deepep_remote_nodes_per_token(int experts, int experts_per_token, int nodes) {
  if (nodes <= 1) return 0;
  // C(E - E/n, k) / C(E, k) as a product: the chance that none of the k picks lands on a given node.
  const double per_node = static_cast<double>(experts) / nodes;
  double none = 1;
  for (int i = 0; i < experts_per_token; ++i) none *= std::max(0.0, (experts - per_node - i) / (experts - i));
  return (nodes - 1) * (1 - none);
}

double moe_dispatch_bytes(const TransformerModel& t, double b, int tp) {
  return t.seq_len * b * t.moe.experts_per_token * t.hidden * dtype_bytes(t.dtype) / tp;
}

}  // namespace pipesim::transformer
