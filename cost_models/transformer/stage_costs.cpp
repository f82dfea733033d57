#include "cost_models/transformer/stage_costs.h"

#include <algorithm>

#include "cost_models/transformer/balanced_stages.h"
#include "cost_models/transformer/collectives.h"
#include "cost_models/transformer/fp8_gemms.h"
#include "cost_models/transformer/layer_split.h"
#include "cost_models/transformer/memory_bytes.h"
#include "cost_models/transformer/moe_layer.h"
#include "cost_models/transformer/mtp_modules.h"
#include "cost_models/transformer/parallel_comm.h"
#include "cost_models/transformer/shapes_flops.h"

namespace pipesim {
namespace transformer {

void add_unit_costs(StageCosts& c, const UnitCosts& u) {
  c.forward_s += u.forward_s;
  c.forward_comm_s += u.forward_comm_s;
  c.backward_input_comm_s += u.backward_input_comm_s;
  c.backward_input_s += u.backward_input_s;
  c.backward_weight_s += u.backward_weight_s;
  c.activation_bytes += u.activation_bytes;
  c.weight_grad_activation_bytes += u.weight_grad_activation_bytes;
  c.model_flops += u.model_flops;
}

void set_parameters_and_optimizer(StageCosts& c, const TransformerSetup& setup, const Device& d, double b,
                                  int stages, double matrix_params, double other_params,
                                  const MatrixOptimizerWork& matrix_work, double expert_params) {
  const ParallelConfig& p = setup.parallel;
  c.parameters = matrix_params + other_params + expert_params;
  c.expert_parameters = expert_params;
  const OptimizerBytes on_matrix = optimizer_bytes(setup.optimizer.type, true);
  const OptimizerBytes on_other = optimizer_bytes(setup.optimizer.type, false);
  const bool override_state = setup.optimizer.state_bytes_per_param >= 0;
  const double dense_matrix = matrix_params + expert_params;
  double optimizer_state = override_state ? c.parameters * setup.optimizer.state_bytes_per_param
                                          : dense_matrix * on_matrix.state + other_params * on_other.state +
                                                matrix_work.state_bytes;
  // The experts' share of the state and of the step's traffic: sharded over their own replicas.
  const double expert_share = c.parameters > 0 ? expert_params / c.parameters : 0;
  const double traffic_s =
      (dense_matrix * on_matrix.traffic + other_params * on_other.traffic) / d.optimizer_bandwidth;
  // ZeRO: each of the d x c ranks holding these weights keeps and updates a share of the state (1), of the
  // gradients (2), of the weights (3); the experts' over the d x c / e ranks holding them.
  const int shards = p.weight_replicas(), expert_shards = std::max(1, p.expert_weight_replicas());
  const auto sharded = [&](double whole, int zero) {
    if (p.zero < zero) return whole;
    return whole * (1 - expert_share) / shards + whole * expert_share / expert_shards;
  };
  c.optimizer_bytes = sharded(optimizer_state, 1);
  c.optimizer_s = sharded(traffic_s, 1) + d.launch;
  c.gradient_bytes = sharded(c.parameters * d.bytes, 2);
  c.parameter_bytes = sharded(c.parameters * d.bytes, 3);
  if (setup.model.fp8 != Fp8Recipe::kNone) {
    // The layers' weights also held as FP8 copies, cast once a step (fp8_gemms.h).
    c.parameter_bytes += sharded(dense_matrix * kFp8WeightCopyBytes, 3);
    c.optimizer_s += dense_matrix * kFp8WeightCastBytes / d.optimizer_bandwidth;
  }
  c.optimizer_s += matrix_work.seconds;
  c.gradient_reduce_s =
      data_parallel_reduce_seconds(setup, (c.parameters - expert_params) * d.bytes, stages) +
      expert_data_parallel_reduce_seconds(setup, expert_params * d.bytes, stages);
  c.optimizer_s += c.gradient_reduce_s;
  {
    // Overlapped: unit k's gradients (of u units, each of the last gradient op's W / u) reduce as soon as
    // they are made and the reduction before them is done: the reductions end max(r, W/u + R - W) after the
    // op, for R in all and r = R / u each (two stages of a pipeline of u items).
    const int units = std::max(1, c.layers + (c.embedding ? 1 : 0) + (c.output ? 1 : 0));
    const double each = c.gradient_reduce_s / units;
    c.gradient_reduce_exposed_s =
        std::max(each, c.gradient_reduce_s - c.backward_weight_s * (units - 1) / units);
  }
  const int expert_replicas = p.expert_weight_replicas();
  if (p.zero >= 3 && (shards > 1 || expert_replicas > 1)) {
    // The stage's weights gathered for each forward and each input gradient, unit by unit (its layers, the
    // embedding, the output layer); prefetched, each unit's gather runs during the unit before it.
    const double gather = all_gather_seconds((c.parameters - expert_params) * d.bytes, shards,
                                             weight_replica_link(setup, stages)) +
                          (expert_params > 0 && expert_replicas > 1
                               ? all_gather_seconds(expert_params * d.bytes, expert_replicas,
                                                    weight_replica_link(expert_replica_setup(setup), stages))
                               : 0);
    const int units = std::max(1, c.layers + (c.embedding ? 1 : 0) + (c.output ? 1 : 0));
    const auto with_gather = [&](double compute_s) {
      return p.overlap_weight_gather ? std::max(compute_s, gather) + gather / units : compute_s + gather;
    };
    c.forward_s = with_gather(c.forward_s);
    c.backward_input_s = with_gather(c.backward_input_s);
  }
  c.transfer_bytes =
      setup.model.seq_len * b * setup.model.hidden * d.bytes / (p.sequence_parallel ? p.tensor : 1);
  c.transfer_s = stages > 1 ? transfer_seconds(setup.profile, c.transfer_bytes) : 0;
}

namespace {

// One whole layer's costs on one rank: a dense layer, or one whose MLP is a mixture of experts.
struct LayerCosts {
  double forward_s = 0, backward_input_s = 0, backward_weight_s = 0;
  double forward_comm_s = 0, backward_input_comm_s = 0;  // of which the expert all-to-alls
  double activation_bytes = 0, full_activation_bytes = 0, weight_grad_activation_bytes = 0;
  double model_flops = 0;
  double matrix_params = 0, expert_params = 0;
  MatrixOptimizerWork matrix_work;
};

LayerCosts layer_costs(const TransformerSetup& setup, const Device& d, double b, int stages, bool moe) {
  const TransformerModel& t = setup.model;
  const ParallelConfig& p = setup.parallel;
  const int tp = p.tensor, ep = p.expert;
  const bool sp = p.sequence_parallel;
  const ExpertLayout layout = expert_layout(setup);
  ExpertLayout counted_layout = layout;
  counted_layout.load = 1;
  LayerShapes shapes = attention_shapes(t, b, tp, sp);
  LayerShapes counted = attention_shapes(without_recompute(t), b, tp, true);  // one rank's share of the FLOPs
  const LayerShapes mlp = moe ? moe_shapes(t, b, layout) : mlp_shapes(t, b, tp);
  const LayerShapes counted_mlp =
      moe ? moe_shapes(without_recompute(t), b, counted_layout) : mlp_shapes(without_recompute(t), b, tp);
  for (auto [to, from] : {std::pair{&shapes, &mlp}, std::pair{&counted, &counted_mlp}}) {
    append(to->forward, from->forward);
    append(to->backward_input, from->backward_input);
    append(to->backward_weight, from->backward_weight);
  }
  const HalfBytes attention_b = attention_bytes(t, b, tp, sp);
  const HalfBytes mlp_b = moe ? moe_bytes(t, b, layout, sp) : mlp_bytes(t, b, tp, sp);
  LayerCosts c;
  c.activation_bytes = attention_b.stored + mlp_b.stored;
  c.full_activation_bytes = attention_b.full + mlp_b.full;
  c.weight_grad_activation_bytes = attention_weight_grad_activation_bytes(t, b, tp, sp) +
                                   (moe ? moe_weight_grad_activation_bytes(t, b, layout, sp)
                                        : mlp_weight_grad_activation_bytes(t, b, tp, sp));
  // The tensor-parallel collectives: the attention half's, and the dense MLP's or the routed copies'.
  const TensorParallelSeconds dense_tp = tensor_collective_seconds(setup, b);
  TensorParallelSeconds collectives = dense_tp;
  TensorParallelSeconds all_to_all;
  if (moe) {
    const TensorParallelSeconds routed = moe_tensor_collective_seconds(setup, b);
    collectives = {dense_tp.forward / 2 + routed.forward,
                   dense_tp.backward_input / 2 + routed.backward_input};
    all_to_all = expert_all_to_all_seconds(setup, b, stages);
  }
  const TensorParallelSeconds ring = ring_attention_seconds(setup, d, b, stages);
  const ElementwiseSeconds elementwise = elementwise_seconds(t, d, c.full_activation_bytes);
  const Kernels attention = attention_kernels(t), mlp_k = moe ? moe_kernels(t) : mlp_kernels(t);
  c.forward_s =
      gemm_seconds(d.forward, shapes.forward, d.attention_flops_per_s) + elementwise.forward +
      (attention.forward + mlp_k.forward) * d.launch +
      exposed_tensor_comm_seconds(p, collectives.forward, weight_gemm_seconds(d.forward, shapes.forward)) +
      ring.forward + all_to_all.forward;
  c.backward_input_s = gemm_seconds(d.gemm, shapes.backward_input, d.attention_flops_per_s) +
                       elementwise.backward_input +
                       (attention.backward_input + mlp_k.backward_input) * d.launch +
                       exposed_tensor_comm_seconds(p, collectives.backward_input,
                                                   weight_gemm_seconds(d.gemm, shapes.backward_input)) +
                       ring.backward_input + all_to_all.backward_input;
  c.backward_weight_s = gemm_seconds(d.weight, shapes.backward_weight) +
                        (attention.backward_weight + mlp_k.backward_weight) * d.launch;
  c.forward_s += fp8_cast_seconds(t, d, shapes.forward);
  c.backward_input_s += fp8_cast_seconds(t, d, shapes.backward_input);
  c.forward_comm_s = all_to_all.forward;
  c.backward_input_comm_s = all_to_all.backward_input;
  c.model_flops = flops(counted.forward) + flops(counted.backward_input) + flops(counted.backward_weight);
  c.matrix_params =
      attention_rank_parameters(t, tp) + (moe ? moe_rank_other_parameters(t, tp) : mlp_parameters(t) / tp);
  c.expert_params = moe ? moe_rank_expert_parameters(t, layout) : 0;
  MatrixShapes matrices = attention_matrices(t);
  const MatrixShapes mlp_matrices_of = moe ? moe_matrices(t, ep) : mlp_matrices(t);
  matrices.insert(matrices.end(), mlp_matrices_of.begin(), mlp_matrices_of.end());
  c.matrix_work = matrix_optimizer_work(setup.optimizer, d.dtype_gemm, matrices);
  return c;
}

void add_layers(StageCosts& c, const LayerCosts& layer, int count, Recompute recompute) {
  if (count <= 0) return;
  c.forward_s += count * layer.forward_s;
  c.backward_input_s += count * layer.backward_input_s;
  c.backward_weight_s += count * layer.backward_weight_s;
  c.forward_comm_s += count * layer.forward_comm_s;
  c.backward_input_comm_s += count * layer.backward_input_comm_s;
  c.activation_bytes += count * layer.activation_bytes;
  c.weight_grad_activation_bytes += count * layer.weight_grad_activation_bytes;
  c.model_flops += count * layer.model_flops;
  // Full (op-level) recomputation rebuilds one layer at a time: the largest layer's dropped bytes.
  if (recompute == Recompute::kFull)
    c.recompute_working_bytes = std::max(c.recompute_working_bytes, layer.full_activation_bytes);
  if (recompute == Recompute::kOp) {
    c.recompute_working_bytes =
        std::max(c.recompute_working_bytes, layer.full_activation_bytes - layer.activation_bytes);
  }
}

// A split other than balanced: whole layers per stage, each a dense layer or a MoE layer.
std::vector<StageCosts> predicted_stage_costs(const TransformerSetup& setup, double b, int stages) {
  const TransformerModel& t = setup.model;
  const Device d(setup);
  const LayerCosts dense = layer_costs(setup, d, b, stages, false);
  const LayerCosts moe = t.moe.any() ? layer_costs(setup, d, b, stages, true) : dense;

  const std::vector<int> layers = stage_layer_counts(setup, stages);
  std::vector<StageCosts> result(stages);
  int first_layer = 0;
  for (int i = 0; i < stages; ++i) {
    StageCosts& c = result[i];
    c.layers = layers[i];
    c.embedding = i == 0;
    c.output = i == stages - 1;
    int moe_layers = 0;
    for (int l = first_layer; l < first_layer + c.layers; ++l) moe_layers += t.moe_layer(l) ? 1 : 0;
    first_layer += c.layers;
    const int dense_layers = c.layers - moe_layers;
    add_layers(c, dense, dense_layers, t.recompute);
    add_layers(c, moe, moe_layers, t.recompute);
    const double matrix_params = dense_layers * dense.matrix_params + moe_layers * moe.matrix_params;
    const double expert_params = moe_layers * moe.expert_params;
    double other_params = 0;
    if (c.embedding) {
      const UnitCosts u = embedding_unit(setup, d, b);
      add_unit_costs(c, u);  // its I, bytes and FLOPs are 0
      other_params += u.other_params;
    }
    MatrixOptimizerWork work{
        dense_layers * dense.matrix_work.seconds + moe_layers * moe.matrix_work.seconds,
        dense_layers * dense.matrix_work.state_bytes + moe_layers * moe.matrix_work.state_bytes};
    double stage_matrix_params = matrix_params, stage_expert_params = expert_params;
    if (c.output) {
      const UnitCosts u = output_unit(setup, d, b);
      add_unit_costs(c, u);
      // Tied: one matrix serves both ends when they share a stage.
      if (!(c.embedding && t.tied_embeddings)) other_params += u.other_params;
      if (t.mtp_layers > 0) {
        const UnitCosts mtp = mtp_unit(setup, d, b);
        add_unit_costs(c, mtp);
        stage_matrix_params += mtp.matrix_params;
        stage_expert_params += mtp.expert_params;
        // The embedding's copy only where the stage does not hold the embedding itself.
        other_params += mtp.other_params - (c.embedding ? mtp_embedding_copy_parameters(setup) : 0);
        work.seconds += mtp.matrix_optimizer_s;
        work.state_bytes += mtp.matrix_optimizer_bytes;
      }
    }
    set_parameters_and_optimizer(c, setup, d, b, stages, stage_matrix_params, other_params, work,
                                 stage_expert_params);
  }
  return result;
}

}  // namespace
}  // namespace transformer

std::vector<int> balanced_unit_starts(const TransformerSetup& setup, double microbatch_size, int stages,
                                      const Limits& limits) {
  using namespace transformer;
  const double b = rank_microbatch(setup, microbatch_size);
  return balanced_starts(setup, rank_units(setup, b), b, stages, limits);
}

std::vector<StageCosts> transformer_stage_costs(const TransformerSetup& setup, double microbatch_size,
                                                int stages, const Limits& limits) {
  using namespace transformer;
  const double b = rank_microbatch(setup, microbatch_size);  // one context-parallel rank's share
  return scaled_op_times(setup.split == LayerSplit::kBalanced ? balanced_stage_costs(setup, b, stages, limits)
                                                              : predicted_stage_costs(setup, b, stages),
                         setup.profile.op_time_scale);
}

}  // namespace pipesim
