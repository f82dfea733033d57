#include "cost_models/transformer/units.h"

#include "cost_models/transformer/fp8_gemms.h"
#include "cost_models/transformer/memory_bytes.h"
#include "cost_models/transformer/moe_layer.h"
#include "cost_models/transformer/mtp_modules.h"
#include "cost_models/transformer/optimizer_work.h"
#include "cost_models/transformer/parallel_comm.h"
#include "cost_models/transformer/shapes_flops.h"

namespace pipesim {
namespace transformer {
namespace {

// Output layer and cross-entropy: fp32 logits; bytes moved per logit by the loss (forward: max, exp, sum,
// normalize; backward: softmax minus one-hot).
constexpr double kLossForwardBytesPerLogit = 16;
constexpr double kLossBackwardBytesPerLogit = 8;

}  // namespace

ElementwiseSeconds elementwise_seconds(const TransformerModel& t, const Device& d, double full_bytes) {
  const double forward = t.forward_elementwise_passes * full_bytes / d.bandwidth / d.elementwise_efficiency;
  const double backward = t.backward_elementwise_passes * full_bytes / d.bandwidth / d.elementwise_efficiency;
  // Full and op-level recomputation rerun every memory-bound op of the forward.
  const bool rerun = t.recompute == Recompute::kFull || t.recompute == Recompute::kOp;
  return {forward, backward + (rerun ? forward : 0)};
}

void add_to_unit(UnitCosts& to, const UnitCosts& from) {
  to.forward_s += from.forward_s;
  to.backward_input_s += from.backward_input_s;
  to.backward_weight_s += from.backward_weight_s;
  to.forward_comm_s += from.forward_comm_s;
  to.backward_input_comm_s += from.backward_input_comm_s;
  to.activation_bytes += from.activation_bytes;
  to.weight_grad_activation_bytes += from.weight_grad_activation_bytes;
  to.full_activation_bytes += from.full_activation_bytes;
  to.model_flops += from.model_flops;
  to.matrix_params += from.matrix_params;
  to.expert_params += from.expert_params;
  to.other_params += from.other_params;
  to.matrix_optimizer_s += from.matrix_optimizer_s;
  to.matrix_optimizer_bytes += from.matrix_optimizer_bytes;
}

// Gather the token rows and write the embeddings; the backward scatters their gradients (a W op). Vocabulary-
// parallel: each rank holds vocab / t rows, and the forward all-reduces the embeddings.
UnitCosts embedding_unit(const TransformerSetup& setup, const Device& d, double b) {
  const double activations = setup.model.seq_len * b * setup.model.hidden * d.bytes,
               traffic = 2 * activations;
  UnitCosts u;
  u.kind = UnitKind::kEmbedding;
  u.forward_s = traffic / d.bandwidth + 2 * d.launch + tensor_all_reduce_seconds(setup, activations);
  u.backward_weight_s = traffic / d.bandwidth + 2 * d.launch;
  u.other_params = static_cast<double>(setup.model.vocab) * setup.model.hidden / setup.parallel.tensor;
  return u;
}

// The output layer and the cross-entropy over fp32 logits. Vocabulary-parallel: each rank computes vocab / t
// logits; the loss all-reduces two fp32 statistics per token, the input gradient all-reduces tokens x h.
UnitCosts output_unit(const TransformerSetup& setup, const Device& d, double b) {
  const int tp = setup.parallel.tensor;
  const double tokens = static_cast<double>(setup.model.seq_len) * b, h = setup.model.hidden,
               vocab = static_cast<double>(setup.model.vocab) / tp;
  UnitCosts u;
  u.kind = UnitKind::kOutput;
  u.forward_s = d.dtype_forward.seconds(tokens, vocab, h) +
                kLossForwardBytesPerLogit * tokens * vocab / d.bandwidth + 4 * d.launch +
                tensor_all_reduce_seconds(setup, 2 * 4 * tokens);
  u.backward_input_s = d.dtype_gemm.seconds(tokens, h, vocab) +
                       kLossBackwardBytesPerLogit * tokens * vocab / d.bandwidth + 4 * d.launch +
                       tensor_all_reduce_seconds(setup, tokens * h * d.bytes);
  u.backward_weight_s = d.dtype_weight.seconds(h, vocab, tokens) + 2 * d.launch;
  // The output layer's input (for its weight gradient) and the fp32 softmax of the logits.
  u.activation_bytes = tokens * h * d.bytes + 4 * tokens * vocab;
  u.weight_grad_activation_bytes = tokens * h * d.bytes;
  u.full_activation_bytes = u.activation_bytes;
  u.model_flops = 3 * 2 * tokens * h * vocab;
  u.other_params = vocab * h;
  return u;
}

std::vector<UnitCosts> rank_units(const TransformerSetup& setup, double b) {
  const TransformerModel& t = setup.model;
  const Device d(setup);
  const double s = t.seq_len, h = t.hidden, tokens = s * b;
  const TransformerModel counted = without_recompute(t);
  const int tp = setup.parallel.tensor;
  const bool sp = setup.parallel.sequence_parallel;
  // Each half ends its forward with one tensor-parallel all-reduce and its input gradient with another.
  const TensorParallelSeconds collectives = tensor_collective_seconds(setup, b);
  const TensorParallelSeconds ring = ring_attention_seconds(setup, d, b, 1);
  const ParallelConfig& p = setup.parallel;
  const ExpertLayout layout = expert_layout(setup);
  ExpertLayout counted_layout = layout;
  counted_layout.load = 1;
  auto half = [&](UnitKind kind, bool moe) {
    const bool attention = kind == UnitKind::kAttention;
    const LayerShapes shapes = attention ? attention_shapes(t, b, tp, sp)
                               : moe     ? moe_shapes(t, b, layout)
                                         : mlp_shapes(t, b, tp);
    const LayerShapes counted_shapes = attention ? attention_shapes(counted, b, tp, true)
                                       : moe     ? moe_shapes(counted, b, counted_layout)
                                                 : mlp_shapes(counted, b, tp);
    const HalfBytes bytes = attention ? attention_bytes(t, b, tp, sp)
                            : moe     ? moe_bytes(t, b, layout, sp)
                                      : mlp_bytes(t, b, tp, sp);
    const Kernels kernels = attention ? attention_kernels(t) : moe ? moe_kernels(t) : mlp_kernels(t);
    const ElementwiseSeconds elementwise = elementwise_seconds(t, d, bytes.full);
    UnitCosts u;
    u.kind = kind;
    u.forward_s = gemm_seconds(d.forward, shapes.forward, d.attention_flops_per_s) + elementwise.forward +
                  kernels.forward * d.launch;
    u.backward_input_s = gemm_seconds(d.gemm, shapes.backward_input, d.attention_flops_per_s) +
                         elementwise.backward_input + kernels.backward_input * d.launch;
    u.backward_weight_s = gemm_seconds(d.weight, shapes.backward_weight) + kernels.backward_weight * d.launch;
    u.forward_s += fp8_cast_seconds(t, d, shapes.forward);
    u.backward_input_s += fp8_cast_seconds(t, d, shapes.backward_input);
    TensorParallelSeconds half_tp = {collectives.forward / 2, collectives.backward_input / 2};
    TensorParallelSeconds all_to_all;
    if (moe) {
      half_tp = moe_tensor_collective_seconds(setup, b);
      all_to_all = expert_all_to_all_seconds(setup, b, 1);
    }
    u.forward_s +=
        exposed_tensor_comm_seconds(p, half_tp.forward, weight_gemm_seconds(d.forward, shapes.forward)) +
        (attention ? ring.forward : 0) + all_to_all.forward;
    u.backward_input_s += exposed_tensor_comm_seconds(p, half_tp.backward_input,
                                                      weight_gemm_seconds(d.gemm, shapes.backward_input)) +
                          (attention ? ring.backward_input : 0) + all_to_all.backward_input;
    u.forward_comm_s = all_to_all.forward;
    u.backward_input_comm_s = all_to_all.backward_input;
    u.activation_bytes = bytes.stored;
    u.full_activation_bytes = bytes.full;
    u.model_flops = flops(counted_shapes.forward) + flops(counted_shapes.backward_input) +
                    flops(counted_shapes.backward_weight);
    u.matrix_params = attention ? attention_rank_parameters(t, tp)
                      : moe     ? moe_rank_other_parameters(t, tp)
                                : mlp_parameters(t) / tp;
    u.expert_params = moe ? moe_rank_expert_parameters(t, layout) : 0;
    u.weight_grad_activation_bytes = attention ? attention_weight_grad_activation_bytes(t, b, tp, sp)
                                     : moe     ? moe_weight_grad_activation_bytes(t, b, layout, sp)
                                               : mlp_weight_grad_activation_bytes(t, b, tp, sp);
    const MatrixOptimizerWork work = matrix_optimizer_work(setup.optimizer, d.dtype_gemm,
                                                           attention ? attention_matrices(t)
                                                           : moe     ? moe_matrices(t, p.expert)
                                                                     : mlp_matrices(t));
    u.matrix_optimizer_s = work.seconds;
    u.matrix_optimizer_bytes = work.state_bytes;
    return u;
  };
  // Every layer's halves of a kind cost the same: computed once, copied per layer.
  UnitCosts attention = half(UnitKind::kAttention, false), mlp = half(UnitKind::kMlp, false);
  const UnitCosts moe = t.moe.any() ? half(UnitKind::kMlp, true) : mlp;
  std::vector<UnitCosts> units = {embedding_unit(setup, d, b)};
  for (int layer = 0; layer < t.layers; ++layer) {
    attention.layer = layer;
    units.push_back(attention);
    units.push_back(t.moe_layer(layer) ? moe : mlp);
    units.back().layer = layer;
  }
  // The final layer norm reads its input and writes its output; the backward reads both and the incoming
  // gradient; the weight gradient reduces the normalized input times the gradient over the tokens.
  const double row_bytes = tokens * h * d.bytes;
  UnitCosts norm;
  norm.kind = UnitKind::kFinalNorm;
  norm.forward_s = 2 * row_bytes / d.bandwidth + d.launch;
  norm.backward_input_s = 3 * row_bytes / d.bandwidth + d.launch;
  norm.backward_weight_s = 2 * row_bytes / d.bandwidth + d.launch;
  norm.activation_bytes = row_bytes;
  norm.full_activation_bytes = row_bytes;
  norm.weight_grad_activation_bytes = row_bytes;
  norm.other_params = setup.model.norm_parameters();
  units.push_back(norm);
  units.push_back(output_unit(setup, d, b));
  // The multi-token prediction modules run with the output layer, on its stage.
  if (t.mtp_layers > 0) add_to_unit(units.back(), mtp_unit(setup, d, b));
  return units;
}

}  // namespace transformer

std::vector<UnitCosts> transformer_units(const TransformerSetup& setup, double b) {
  using namespace transformer;
  return scaled_op_times(rank_units(setup, rank_microbatch(setup, b)), setup.profile.op_time_scale);
}

}  // namespace pipesim
