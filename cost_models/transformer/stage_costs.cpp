#include "cost_models/transformer/stage_costs.h"

#include <algorithm>

#include "cost_models/transformer/balanced_stages.h"
#include "cost_models/transformer/collectives.h"
#include "cost_models/transformer/layer_split.h"
#include "cost_models/transformer/memory_bytes.h"
#include "cost_models/transformer/parallel_comm.h"
#include "cost_models/transformer/shapes_flops.h"

namespace pipesim {
namespace transformer {

void add_unit_costs(StageCosts& c, const UnitCosts& u) {
  c.forward_s += u.forward_s;
  c.backward_input_s += u.backward_input_s;
  c.backward_weight_s += u.backward_weight_s;
  c.activation_bytes += u.activation_bytes;
  c.weight_grad_activation_bytes += u.weight_grad_activation_bytes;
  c.model_flops += u.model_flops;
}

void set_parameters_and_optimizer(StageCosts& c, const TransformerSetup& setup, const Device& d, double b,
                                  int stages, double matrix_params, double other_params,
                                  const MatrixOptimizerWork& matrix_work) {
  const ParallelConfig& p = setup.parallel;
  c.parameters = matrix_params + other_params;
  c.parameter_bytes = c.parameters * d.bytes;
  c.gradient_bytes = c.parameters * d.bytes;
  const OptimizerBytes on_matrix = optimizer_bytes(setup.optimizer.type, true);
  const OptimizerBytes on_other = optimizer_bytes(setup.optimizer.type, false);
  const bool override_state = setup.optimizer.state_bytes_per_param >= 0;
  c.optimizer_bytes = override_state ? c.parameters * setup.optimizer.state_bytes_per_param
                                     : matrix_params * on_matrix.state + other_params * on_other.state +
                                           matrix_work.state_bytes;
  c.optimizer_s =
      (matrix_params * on_matrix.traffic + other_params * on_other.traffic) / d.optimizer_bandwidth +
      d.launch;
  // ZeRO: each of the d x c ranks holding these weights keeps and updates a share of the state (1), of the
  // gradients (2), of the weights (3).
  const int shards = p.weight_replicas();
  if (p.zero >= 1) {
    c.optimizer_bytes /= shards;
    c.optimizer_s = (c.optimizer_s - d.launch) / shards + d.launch;
  }
  if (p.zero >= 2) c.gradient_bytes /= shards;
  if (p.zero >= 3) c.parameter_bytes /= shards;
  c.optimizer_s += matrix_work.seconds;
  c.gradient_reduce_s = data_parallel_reduce_seconds(setup, c.parameters * d.bytes, stages);
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
  if (p.zero >= 3 && shards > 1) {
    // The stage's weights gathered for each forward and each input gradient, unit by unit (its layers, the
    // embedding, the output layer); prefetched, each unit's gather runs during the unit before it.
    const double gather =
        all_gather_seconds(c.parameters * d.bytes, shards, weight_replica_link(setup, stages));
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

// A split other than balanced: whole layers per stage, every layer alike.
std::vector<StageCosts> predicted_stage_costs(const TransformerSetup& setup, double b, int stages) {
  const TransformerModel& t = setup.model;
  const Device d(setup);
  const int tp = setup.parallel.tensor;
  const bool sp = setup.parallel.sequence_parallel;
  const LayerShapes shapes = layer_shapes(t, b, tp);
  const double act = attention_bytes(t, b, tp, sp).stored + mlp_bytes(t, b, tp, sp).stored;
  const double full_act = attention_bytes(t, b, tp, sp).full + mlp_bytes(t, b, tp, sp).full;
  const TensorParallelSeconds collectives = tensor_collective_seconds(setup, b);
  const TensorParallelSeconds ring = ring_attention_seconds(setup, d, b, stages);
  const ElementwiseSeconds elementwise = elementwise_seconds(t, d, full_act);
  const Kernels attention = attention_kernels(t), mlp = mlp_kernels(t);
  const ParallelConfig& p = setup.parallel;
  const double layer_f =
      gemm_seconds(d.forward, shapes.forward, d.attention_flops_per_s) + elementwise.forward +
      (attention.forward + mlp.forward) * d.launch +
      exposed_tensor_comm_seconds(p, collectives.forward, weight_gemm_seconds(d.forward, shapes.forward)) +
      ring.forward;
  const double layer_i = gemm_seconds(d.gemm, shapes.backward_input, d.attention_flops_per_s) +
                         elementwise.backward_input +
                         (attention.backward_input + mlp.backward_input) * d.launch +
                         exposed_tensor_comm_seconds(p, collectives.backward_input,
                                                     weight_gemm_seconds(d.gemm, shapes.backward_input)) +
                         ring.backward_input;
  const double layer_w = gemm_seconds(d.weight, shapes.backward_weight) +
                         (attention.backward_weight + mlp.backward_weight) * d.launch;
  const LayerShapes counted = layer_shapes(without_recompute(t), b, tp);  // one rank's share of the FLOPs
  const double layer_model_flops =
      flops(counted.forward) + flops(counted.backward_input) + flops(counted.backward_weight);

  const std::vector<int> layers = stage_layer_counts(setup, stages);
  std::vector<StageCosts> result(stages);
  for (int i = 0; i < stages; ++i) {
    StageCosts& c = result[i];
    c.layers = layers[i];
    c.embedding = i == 0;
    c.output = i == stages - 1;
    c.forward_s = c.layers * layer_f;
    c.backward_input_s = c.layers * layer_i;
    c.backward_weight_s = c.layers * layer_w;
    c.activation_bytes = c.layers * act;
    c.weight_grad_activation_bytes = c.layers * weight_grad_activation_bytes(t, b, tp, sp);
    c.model_flops = c.layers * layer_model_flops;
    if (t.recompute == Recompute::kFull && c.layers > 0) c.recompute_working_bytes = full_act;
    if (t.recompute == Recompute::kOp && c.layers > 0) c.recompute_working_bytes = full_act - act;
    const double matrix_params = c.layers * layer_parameters(t) / tp;
    double other_params = 0;
    if (c.embedding) {
      const UnitCosts u = embedding_unit(setup, d, b);
      add_unit_costs(c, u);  // its I, bytes and FLOPs are 0
      other_params += u.other_params;
    }
    if (c.output) {
      const UnitCosts u = output_unit(setup, d, b);
      add_unit_costs(c, u);
      // Tied: one matrix serves both ends when they share a stage.
      if (!(c.embedding && t.tied_embeddings)) other_params += u.other_params;
    }
    const MatrixOptimizerWork layer = matrix_optimizer_work(setup.optimizer, d.gemm, layer_matrices(t));
    set_parameters_and_optimizer(c, setup, d, b, stages, matrix_params, other_params,
                                 {c.layers * layer.seconds, c.layers * layer.state_bytes});
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
