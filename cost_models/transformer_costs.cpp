#include "cost_models/transformer_costs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cassert>
#include <cmath>

#include "base/errors.h"
#include "base/value_ranges.h"
#include "cost_models/balanced_split.h"
#include "cost_models/collectives.h"
#include "cost_models/job_topology.h"

namespace pipesim {
namespace {

// C[m x n] = A[m x k] * B[k x n]; `count` independent copies (a strided batched GEMM) run as one GEMM with
// the batch stacked along m, which is how they fill the device.
struct Gemm {
  double m, n, k;
  double count = 1;
  // > 0: a product inside flash attention's fused kernel, which does this share of its FLOPs (a causal mask
  // skips the tiles above the diagonal) at the kernel's own rate, never writing the s x s scores.
  double flash_work = 0;
};

// `attention_flops_per_s`: flash attention's rate (Device); the other products run at the grid's rate.
double gemm_seconds(const GemmTable& table, const std::vector<Gemm>& gemms,
                    double attention_flops_per_s = 0) {
  double seconds = 0;
  for (const Gemm& g : gemms) {
    if (g.flash_work > 0) {
      assert(attention_flops_per_s > 0);
      seconds += 2 * g.m * g.n * g.k * g.count * g.flash_work / attention_flops_per_s;
    } else {
      seconds += table.seconds(g.m * g.count, g.n, g.k);
    }
  }
  return seconds;
}

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
struct Kernels {
  double forward, backward_input, backward_weight;
};

Kernels attention_kernels(const TransformerModel& t) {
  const double fused = t.attention == AttentionKind::kFlash ? 3 : 0;
  Kernels k{11 - fused, 13 - fused, 5};
  if (t.recompute == Recompute::kFull) k.backward_input += k.forward;
  return k;
}

Kernels mlp_kernels(const TransformerModel& t) {
  Kernels k{6, 7, 5};
  if (t.recompute == Recompute::kFull) k.backward_input += k.forward;
  return k;
}

// Output layer and cross-entropy: fp32 logits; bytes moved per logit by the loss (forward: max, exp, sum,
// normalize; backward: softmax minus one-hot).
constexpr double kLossForwardBytesPerLogit = 16;
constexpr double kLossBackwardBytesPerLogit = 8;
constexpr double kNewtonSchulzIterations = 5;

struct LayerShapes {
  std::vector<Gemm> forward, backward_input, backward_weight;
};

void append(std::vector<Gemm>& to, const std::vector<Gemm>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

// The GEMMs of a layer's attention half: QKV (a query and k key/value heads of d: ad + 2kd wide), the batched
// GEMMs (per query head), the projection. Flash attention's backward recomputes the scores (one more
// batched GEMM); recomputation reruns in I what it dropped.
// With tensor parallelism over `tp` ranks, one rank's share: QKV column-parallel (output / tp), the
// projection row-parallel (input / tp), heads / tp.
LayerShapes attention_shapes(const TransformerModel& t, double b, int tp = 1) {
  const double s = t.seq_len, h = t.hidden, tokens = s * b, d = t.head_size(), batch = b * t.heads / tp,
               qkv = (t.query_width() + 2.0 * t.key_value_width()) / tp, q_split = t.query_width() / tp;
  LayerShapes shapes;
  const std::vector<Gemm> projections = {{tokens, qkv, h}, {tokens, h, q_split}};
  const double flash = t.attention == AttentionKind::kFlash ? flash_work_share(t) : 0;
  const std::vector<Gemm> core = {{s, s, d, batch, flash}, {s, d, s, batch, flash}};
  shapes.forward = projections;
  append(shapes.forward, core);
  shapes.backward_input = {{tokens, h, qkv},        {tokens, q_split, h},    {s, s, d, batch, flash},
                           {s, d, s, batch, flash}, {s, d, s, batch, flash}, {s, d, s, batch, flash}};
  if (t.attention == AttentionKind::kFlash) {
    shapes.backward_input.push_back({s, s, d, batch, flash});
  } else if (t.recompute == Recompute::kSelective) {
    append(shapes.backward_input, core);
  }
  if (t.recompute == Recompute::kFull) append(shapes.backward_input, shapes.forward);
  shapes.backward_weight = {{h, qkv, tokens}, {q_split, h, tokens}};
  return shapes;
}

// The GEMMs of a layer's MLP half: up (gate and up fused for SwiGLU; column-parallel) and down
// (row-parallel).
LayerShapes mlp_shapes(const TransformerModel& t, double b, int tp = 1) {
  const double h = t.hidden, tokens = t.seq_len * b, f = static_cast<double>(t.ffn()) / tp,
               up = t.mlp == MlpKind::kSwiglu ? 2 * f : f;
  LayerShapes shapes{{{tokens, up, h}, {tokens, h, f}},
                     {{tokens, h, up}, {tokens, f, h}},
                     {{h, up, tokens}, {f, h, tokens}}};
  if (t.recompute == Recompute::kFull) append(shapes.backward_input, shapes.forward);
  return shapes;
}

// The GEMMs of one layer: both halves.
LayerShapes layer_shapes(const TransformerModel& t, double b, int tp = 1) {
  LayerShapes shapes = attention_shapes(t, b, tp);
  const LayerShapes mlp = mlp_shapes(t, b, tp);
  append(shapes.forward, mlp.forward);
  append(shapes.backward_input, mlp.backward_input);
  append(shapes.backward_weight, mlp.backward_weight);
  return shapes;
}

double scale_16bit(const TransformerModel& t) {
  return dtype_bytes(t.dtype) / 2.0;
}

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

// One tensor-parallel rank's share (tp ranks): what the split GEMMs produce (Q, K, V, the context, the
// scores, the MLP's inner activations) / tp; the rest (norm inputs, the QKV and up inputs, dropout masks)
// whole on every rank, or / tp too with sequence parallelism (sp).
HalfBytes attention_bytes(const TransformerModel& t, double b, int tp = 1, bool sp = false) {
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
  return bytes;
}

HalfBytes mlp_bytes(const TransformerModel& t, double b, int tp = 1, bool sp = false) {
  const double h = t.hidden, f = t.ffn(), tokens = t.seq_len * b, scale = scale_16bit(t);
  const double replicated = sp ? 1.0 / tp : 1.0;
  const double per_token =
      (4 * h + (t.dropout ? h : 0)) * replicated + (t.mlp == MlpKind::kSwiglu ? 6 * f : 4 * f) / tp;
  const double without_recompute = tokens * per_token * scale;
  return {t.recompute == Recompute::kFull ? 0.0 : without_recompute, without_recompute};
}

// Optimizer state bytes per parameter and bytes one step reads and writes per parameter.
struct OptimizerBytes {
  double state;
  double traffic;
};

OptimizerBytes optimizer_bytes(OptimizerKind kind, bool matrix_param) {
  // Reads the 16-bit gradient and the fp32 state, writes the state and the 16-bit weights.
  constexpr OptimizerBytes kAdamW{12, 2 + 12 + 12 + 2};
  constexpr OptimizerBytes kSgd{4, 2 + 4 + 4 + 2};
  constexpr OptimizerBytes kMuon{8, 2 + 8 + 8 + 2};
  constexpr OptimizerBytes kLion{8, 2 + 8 + 8 + 2};     // one moment and the master weights
  constexpr OptimizerBytes kAdan{20, 2 + 20 + 20 + 2};  // three moments, the previous gradient, the master
  switch (kind) {
    case OptimizerKind::kAdamW:
    case OptimizerKind::kNAdam:  // the same two moments and master weights as AdamW
    case OptimizerKind::kSoap:   // and its preconditioners per matrix (matrix_optimizer_work)
      return kAdamW;
    case OptimizerKind::kSgd:
      return kSgd;
    case OptimizerKind::kMuon:
      return matrix_param ? kMuon : kAdamW;
    case OptimizerKind::kLion:
      return kLion;
    case OptimizerKind::kAdan:
      return kAdan;
  }
  return kAdamW;
}

// Muon orthogonalizes each r x c update (r <= c) with Newton-Schulz: per iteration X·Xᵀ, A·A and B·X.
struct MatrixOptimizerWork {
  double seconds = 0;      // one step
  double state_bytes = 0;  // beyond the per-parameter state
};
using MatrixShapes = std::vector<std::pair<double, double>>;
MatrixShapes attention_matrices(const TransformerModel& t) {
  const double h = t.hidden;
  const double qkv = t.query_width() + 2.0 * t.key_value_width(), ad = t.query_width();
  return {{std::min(h, qkv), std::max(h, qkv)}, {std::min(h, ad), std::max(h, ad)}};
}
MatrixShapes mlp_matrices(const TransformerModel& t) {
  const double h = t.hidden, f = t.ffn();
  const std::pair<double, double> matrix{std::min(h, f), std::max(h, f)};
  if (t.mlp == MlpKind::kSwiglu) return {matrix, matrix, matrix};
  return {matrix, matrix};
}

double newton_schulz_seconds(const GemmTable& table, const MatrixShapes& matrices) {
  double seconds = 0;
  for (const auto& [rows, cols] : matrices) {
    seconds += gemm_seconds(table, {{rows, rows, cols}, {rows, rows, rows}, {rows, cols, rows}});
  }
  return kNewtonSchulzIterations * seconds;
}

// A symmetric n x n eigendecomposition with its vectors: about 9 n³ flops (tridiagonal reduction, QR
// iterations, back-transformation), charged at the GEMM grid's n x n x n rate (2 n³ flops).
constexpr double kEigendecompositionFlopsPerCube = 9;

// SOAP on r x c matrices: rotating the gradient, the moment and the direction (each Q_Lᵀ X Q_R: an r x c x c
// and an r x c x r GEMM), L and R's products (r x r x c, c x c x r), two eigendecompositions every
// `frequency` steps; fp32 L, R, Q_L, Q_R.
MatrixOptimizerWork soap_work(const GemmTable& table, const MatrixShapes& matrices, int frequency) {
  MatrixOptimizerWork work;
  for (const auto& [rows, cols] : matrices) {
    work.seconds += 3 * gemm_seconds(table, {{rows, cols, cols}, {rows, cols, rows}}) +
                    gemm_seconds(table, {{rows, rows, cols}, {cols, cols, rows}});
    for (const double n : {rows, cols}) {
      work.seconds += kEigendecompositionFlopsPerCube / 2 * gemm_seconds(table, {{n, n, n}}) / frequency;
    }
    work.state_bytes += 2 * 4 * (rows * rows + cols * cols);
  }
  return work;
}

MatrixOptimizerWork matrix_optimizer_work(const OptimizerSpec& optimizer, const GemmTable& table,
                                          const MatrixShapes& matrices) {
  if (optimizer.type == OptimizerKind::kMuon) return {newton_schulz_seconds(table, matrices), 0};
  if (optimizer.type == OptimizerKind::kSoap)
    return soap_work(table, matrices, std::max(1, optimizer.precondition_frequency));
  return {};
}

MatrixShapes layer_matrices(const TransformerModel& t) {
  MatrixShapes layer = attention_matrices(t);
  for (const auto& m : mlp_matrices(t)) layer.push_back(m);
  return layer;
}

// What every part of the model needs from the setup.
// `bandwidth` is what memory-bound kernels achieve: the profile's element-wise kernel's when it measured one,
// else its copy bandwidth; `optimizer_bandwidth` likewise for the optimizer step. The GEMM grid per phase,
// with the frameworks' weights stored [out, in]: the forward X·Wᵀ (nt), the input gradient dY·W (nn), the
// weight gradient dYᵀ·X (tn); a profile without the transposed grids uses its plain one for all three.
struct Device {
  const GemmTable& gemm;          // nn: the input gradient, and the optimizer's Newton-Schulz iterations
  const GemmTable& forward;       // nt
  const GemmTable& weight;        // tn
  double bandwidth;               // bytes/s
  double optimizer_bandwidth;     // bytes/s
  double launch;                  // s
  double bytes;                   // per element of the model's dtype
  double attention_flops_per_s;   // flash attention's fused kernel, over the work it does
  double elementwise_efficiency;  // the profile's fit: the layers' element-wise passes divided by this
  explicit Device(const TransformerSetup& setup)
      : gemm(setup.profile.gemm_table(setup.model.dtype)),
        forward(setup.profile.gemm_table(setup.model.dtype, GemmLayout::kNT)),
        weight(setup.profile.gemm_table(setup.model.dtype, GemmLayout::kTN)),
        bandwidth(setup.profile.elementwise_bandwidth_gb_per_s() * 1e9),
        optimizer_bandwidth(setup.profile.optimizer_bandwidth_gb_per_s() * 1e9),
        launch(setup.profile.launch_overhead_us * 1e-6),
        bytes(dtype_bytes(setup.model.dtype)),
        attention_flops_per_s(flash_attention_efficiency(setup.profile) * forward.best_tflops() * 1e12),
        elementwise_efficiency(setup.profile.fit.elementwise_efficiency) {}
};

// The link a parallel group's collectives run on: the profile's intra-node link when every group along the
// dimension lies inside a node, else its inter-node link.
ParallelDegrees job_degrees(const ParallelConfig& p, int stages) {
  return {.tensor = p.tensor, .context = p.context, .data = p.data, .pipeline = std::max(1, stages)};
}

RankOrder job_rank_order(const ParallelConfig& p) {
  return p.pipeline_before_data ? RankOrder::kTensorContextPipelineData
                                : RankOrder::kTensorContextDataPipeline;
}

const char* dimension_key(ParallelDimension dimension) {
  switch (dimension) {
    case ParallelDimension::kTensor:
      return "tensor";
    case ParallelDimension::kContext:
      return "context";
    case ParallelDimension::kData:
      return "data";
    case ParallelDimension::kPipeline:
      return "pipeline";
  }
  return "data";
}

const LinkSpec& group_link(const TransformerSetup& setup, ParallelDimension dimension, int stages) {
  const ParallelConfig& p = setup.parallel;
  const ParallelDegrees degrees = job_degrees(p, stages);
  const RankOrder order = job_rank_order(p);
  const char* name = dimension_key(dimension);
  if (group_within_node(dimension, degrees, order, p.gpus_per_node)) {
    if (!setup.profile.link) {
      throw InputError(
          fmt::format("parallel.{} > 1: hardware profile '{}' has no link (between GPUs of a node)", name,
                      setup.profile.name));
    }
    return *setup.profile.link;
  }
  if (!setup.profile.inter_node_link) {
    throw InputError(fmt::format(
        "parallel.{}: its groups span nodes of {} GPUs ({} order), and hardware profile '{}' has no "
        "inter_node_link",
        name, p.gpus_per_node, rank_order_name(order), setup.profile.name));
  }
  return *setup.profile.inter_node_link;
}

// The link of the d x c ranks that hold the same weights: inside a node only when both their data-parallel
// and their context-parallel groups are.
const LinkSpec& weight_replica_link(const TransformerSetup& setup, int stages) {
  const ParallelConfig& p = setup.parallel;
  const bool data_inside =
      group_within_node(ParallelDimension::kData, job_degrees(p, stages), job_rank_order(p), p.gpus_per_node);
  // Data inside: the context groups decide; data across nodes: the inter-node link either way.
  return group_link(
      setup, data_inside && p.context > 1 ? ParallelDimension::kContext : ParallelDimension::kData, stages);
}

// One all-reduce over the tensor-parallel group (or a reduce-scatter plus an all-gather: the same ring time).
double tensor_all_reduce_seconds(const TransformerSetup& setup, double bytes) {
  if (setup.parallel.tensor <= 1) return 0;
  return all_reduce_seconds(bytes, setup.parallel.tensor, group_link(setup, ParallelDimension::kTensor, 1));
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
  u.forward_s = d.forward.seconds(tokens, vocab, h) +
                kLossForwardBytesPerLogit * tokens * vocab / d.bandwidth + 4 * d.launch +
                tensor_all_reduce_seconds(setup, 2 * 4 * tokens);
  u.backward_input_s = d.gemm.seconds(tokens, h, vocab) +
                       kLossBackwardBytesPerLogit * tokens * vocab / d.bandwidth + 4 * d.launch +
                       tensor_all_reduce_seconds(setup, tokens * h * d.bytes);
  u.backward_weight_s = d.weight.seconds(h, vocab, tokens) + 2 * d.launch;
  // The output layer's input (for its weight gradient) and the fp32 softmax of the logits.
  u.activation_bytes = tokens * h * d.bytes + 4 * tokens * vocab;
  u.weight_grad_activation_bytes = tokens * h * d.bytes;
  u.full_activation_bytes = u.activation_bytes;
  u.model_flops = 3 * 2 * tokens * h * vocab;
  u.other_params = vocab * h;
  return u;
}

// Parameters, their bytes, the optimizer's state and step time (with ZeRO's shards and the data-parallel
// gradient reduction), and the transfer to the next stage. Per GPU: the params given are one tensor-parallel
// rank's.
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

}  // namespace

namespace {

// One context-parallel rank's share of a microbatch of b sequences: its costs are a microbatch of b/c.
double rank_microbatch(const TransformerSetup& setup, double b) {
  return b / std::max(1, setup.parallel.context);
}

// Per layer, for one rank's share b_rank (already divided by c).
TensorParallelSeconds tensor_collective_seconds(const TransformerSetup& setup, double b_rank) {
  const ParallelConfig& p = setup.parallel;
  if (p.tensor <= 1) return {};
  const double bytes = setup.model.seq_len * b_rank * setup.model.hidden * dtype_bytes(setup.model.dtype);
  const double one =
      tensor_all_reduce_seconds(setup, bytes);  // == reduce-scatter + all-gather (sequence parallel)
  return {2 * one, (setup.model.recompute == Recompute::kFull ? 4 : 2) * one};
}

// The ring's exposed time per layer for one rank's share b_rank (see ParallelConfig in the header).
TensorParallelSeconds ring_attention_seconds(const TransformerSetup& setup, const Device& d, double b_rank,
                                             int stages) {
  const ParallelConfig& p = setup.parallel;
  if (p.context <= 1) return {};
  const TransformerModel& t = setup.model;
  if (const std::string needed = context_parallel_requirement(t, p.context); !needed.empty()) {
    throw InputError(fmt::format("parallel.context {}: expected {}", p.context, needed));
  }
  const LinkSpec& link = group_link(setup, ParallelDimension::kContext, stages);
  const double kv_bytes = 2 * t.seq_len * b_rank * (t.key_value_width() / p.tensor) * d.bytes;
  const auto step_s = [&](double bytes) {
    return bytes / (link.bandwidth_gb_per_s * 1e9) + link.latency_us * 1e-6;
  };
  // Each ring step's transfer hides under one of the c blocks of the core attention.
  const LayerShapes shapes = attention_shapes(t, b_rank, p.tensor);
  const auto core_s = [&](const std::vector<Gemm>& gemms) {
    double seconds = 0;
    for (const Gemm& g : gemms) {
      if (g.flash_work > 0) seconds += gemm_seconds(d.forward, {g}, d.attention_flops_per_s);
    }
    return seconds;
  };
  const int steps = p.context - 1;
  const double forward = steps * std::max(0.0, step_s(kv_bytes) - core_s(shapes.forward) / p.context);
  double backward = steps * std::max(0.0, step_s(2 * kv_bytes) - core_s(shapes.backward_input) / p.context);
  if (t.recompute == Recompute::kFull) backward += forward;  // the rerun forward passes the ring again
  return {forward, backward};
}

}  // namespace

std::string context_parallel_requirement(const TransformerModel& model, int context) {
  if (context < 1) return "a positive degree";
  if (context == 1) return "";
  if (model.attention != AttentionKind::kFlash) {
    return "1 with attention: eager (ring attention runs fused, flash kernels; set attention: flash)";
  }
  if (model.seq_len % (2 * context) != 0) {
    return fmt::format("c with 2c dividing model.seq_len ({}: two chunks per rank)", model.seq_len);
  }
  return "";
}

TensorParallelSeconds tensor_parallel_layer_seconds(const TransformerSetup& setup, double b, int /*stages*/) {
  return tensor_collective_seconds(setup, rank_microbatch(setup, b));
}

TensorParallelSeconds context_parallel_layer_seconds(const TransformerSetup& setup, double b, int stages) {
  return ring_attention_seconds(setup, Device(setup), rank_microbatch(setup, b), stages);
}

double data_parallel_reduce_seconds(const TransformerSetup& setup, double gradient_bytes, int stages) {
  const ParallelConfig& p = setup.parallel;
  const int ranks = p.weight_replicas();
  if (ranks <= 1) return 0;
  const LinkSpec& link = weight_replica_link(setup, stages);
  // Without ZeRO an all-reduce; with ZeRO 1 or 2 a reduce-scatter of the gradients and an all-gather of the
  // updated weights; ZeRO-3 keeps its shard (each F and I gathers the weights it needs): the reduce-scatter.
  if (p.zero >= 3) return reduce_scatter_seconds(gradient_bytes, ranks, link);
  return p.zero >= 1 ? reduce_scatter_seconds(gradient_bytes, ranks, link) +
                           all_gather_seconds(gradient_bytes, ranks, link)
                     : all_reduce_seconds(gradient_bytes, ranks, link);
}

namespace {

double flops(const std::vector<Gemm>& gemms) {
  double total = 0;
  for (const Gemm& g : gemms) total += 2 * g.m * g.n * g.k * g.count;
  return total;
}

// The model without recomputation and with the scores counted once: the FLOPs a training step needs,
// whatever the implementation reruns (MFU's numerator, as Megatron and torchtitan count it).
TransformerModel without_recompute(TransformerModel t) {
  t.recompute = Recompute::kNone;
  t.attention = AttentionKind::kEager;
  return t;
}

}  // namespace

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

double layer_activation_bytes(const TransformerModel& t, double b) {
  return attention_bytes(t, b).stored + mlp_bytes(t, b).stored;
}

double layer_full_activation_bytes(const TransformerModel& t, double b) {
  return attention_bytes(t, b).full + mlp_bytes(t, b).full;
}

namespace {

// One tensor-parallel rank's share of each weight GEMM's input and output gradient (as attention_bytes
// divides them).
double weight_grad_activation_bytes(const TransformerModel& t, double b, int tp, bool sp) {
  const double h = t.hidden, f = t.ffn(), ad = t.query_width(), kd = t.key_value_width(),
               tokens = t.seq_len * b;
  const double whole = sp ? h / tp : h;
  const double attention = (whole + (ad + 2 * kd) / tp) + (ad / tp + whole);  // QKV, projection: in + out
  const double mlp = t.mlp == MlpKind::kSwiglu ? (whole + 2 * f / tp) + (f / tp + whole)
                                               : (whole + f / tp) + (f / tp + whole);
  return 2 * tokens * (attention + mlp) * scale_16bit(t);
}

}  // namespace

// Each weight GEMM's input and output gradient, held from I to W: Σ 2 bytes x tokens x (in + out) over the
// layer's matrices (32·s·b·h for k = a, f = 4h, GeLU: the Zero Bubble paper's figure).
double layer_weight_grad_activation_bytes(const TransformerModel& t, double b) {
  return weight_grad_activation_bytes(t, b, 1, false);
}

double attention_parameters(const TransformerModel& t) {
  const double h = t.hidden;
  return 2 * h * t.query_width() + 2 * h * t.key_value_width();
}

double mlp_parameters(const TransformerModel& t) {
  return (t.mlp == MlpKind::kSwiglu ? 3.0 : 2.0) * t.hidden * t.ffn();
}

double layer_parameters(const TransformerModel& t) {
  return attention_parameters(t) + mlp_parameters(t);
}

double model_parameters(const TransformerModel& t) {
  const double embedding = static_cast<double>(t.vocab) * t.hidden;
  return t.layers * layer_parameters(t) + embedding * (t.tied_embeddings ? 1 : 2) + 2.0 * t.hidden;
}

double model_flops_per_sample(const TransformerModel& t) {
  const TransformerModel counted = without_recompute(t);
  const double tokens = t.seq_len, output = 2.0 * tokens * t.hidden * t.vocab;
  return t.layers * (layer_forward_flops(counted, 1) + layer_backward_input_flops(counted, 1) +
                     layer_backward_weight_flops(counted, 1)) +
         3 * output;
}

double flash_attention_efficiency(const HardwareProfile& profile) {
  return profile.fit.attention_efficiency > 0 ? profile.fit.attention_efficiency
                                              : kDefaultFlashAttentionEfficiency;
}

std::string model_choices_text(const TransformerModel& t) {
  const std::string heads = t.key_value_heads() == t.heads
                                ? "multi-head attention"
                                : fmt::format("{} key/value heads of {}", t.key_value_heads(), t.heads);
  const std::string head_size =
      t.head_dim > 0 && t.head_dim * t.heads != t.hidden ? fmt::format(", heads {} wide", t.head_dim) : "";
  return fmt::format("{}{} attention ({}{}), {} MLP (f = {}), {}recomputation: {}{}",
                     t.attention == AttentionKind::kFlash && t.causal ? "causal " : "",
                     attention_name(t.attention), heads, head_size,
                     t.mlp == MlpKind::kSwiglu ? "SwiGLU" : "GeLU", t.ffn(), t.dropout ? "dropout, " : "",
                     recompute_name(t.recompute), t.tied_embeddings ? ", tied embeddings" : "");
}

std::vector<int> split_layers(int layers, int stages, LayerSplit split) {
  if (stages < 1) throw InputError("layer split: need at least one stage");
  // zb: spread layers + 2 as if the embedding and the loss were one layer each, then take them back; the
  // remainder goes to the stages after the first. even: the remainder goes to the first stages.
  const bool zb = split == LayerSplit::kZeroBubble && stages > 1;
  const int slots = zb ? layers + 2 : layers;
  std::vector<int> result(stages, slots / stages);
  const int first_extra = zb ? 1 : 0;
  for (int i = 0; i < slots % stages; ++i) ++result[first_extra + i];
  if (zb) {
    --result.front();
    --result.back();
  }
  for (int i = 0; i < stages; ++i) {
    const bool end = i == 0 || i == stages - 1;
    if (result[i] < 0 || (result[i] == 0 && !(end && zb))) {
      throw InputError(
          fmt::format("{} layers cannot be split over {} stages ({} split): stage {} would get {}", layers,
                      stages, layer_split_name(split), i + 1, result[i]));
    }
  }
  return result;
}

std::vector<int> stage_layer_counts(const TransformerSetup& setup, int stages) {
  if (setup.split != LayerSplit::kExplicit) return split_layers(setup.model.layers, stages, setup.split);
  const std::vector<int>& counts = setup.stage_layers;
  if (static_cast<int>(counts.size()) != stages) {
    throw InputError(
        fmt::format("layer_split [{}]: {} counts for {} stages (one per stage in model order: "
                    "devices x chunks for a schedule with chunks)",
                    fmt::join(counts, ", "), counts.size(), stages));
  }
  int total = 0;
  for (int i = 0; i < stages; ++i) {
    const bool end = i == 0 || i == stages - 1;
    if (counts[i] < 0 || (counts[i] == 0 && !end)) {
      throw InputError(
          fmt::format("layer_split [{}]: stage {} has {} layers; only the first and the last stage "
                      "(with the embedding or the output layer) may have none",
                      fmt::join(counts, ", "), i + 1, counts[i]));
    }
    total += counts[i];
  }
  if (total != setup.model.layers) {
    throw InputError(fmt::format("layer_split [{}]: {} layers in all, but the model has {}",
                                 fmt::join(counts, ", "), total, setup.model.layers));
  }
  return counts;
}

double transfer_seconds(const HardwareProfile& profile, double bytes) {
  const std::optional<LinkSpec> link = profile.stage_link();
  if (!link) return 0;
  return bytes / (link->bandwidth_gb_per_s * 1e9) + link->latency_us * 1e-6;
}

namespace {

// "emb 1-3 4a" for units [first, last): whole layers as 1-based ranges, a lone half as 4a (attention) or
// 4m (MLP), the embedding, final norm and output layer as emb, norm, out.
std::string unit_range_label(const std::vector<UnitCosts>& units, int first, int last) {
  std::vector<std::string> words;
  int range_first = -1, range_last = -1;  // the run of whole layers being collected (0-based)
  auto flush = [&] {
    if (range_first < 0) return;
    words.push_back(range_first == range_last ? fmt::format("{}", range_first + 1)
                                              : fmt::format("{}-{}", range_first + 1, range_last + 1));
    range_first = range_last = -1;
  };
  for (int k = first; k < last; ++k) {
    const UnitCosts& u = units[k];
    const bool whole = u.kind == UnitKind::kAttention && k + 1 < last;
    if (whole) {
      if (range_first < 0) range_first = u.layer;
      range_last = u.layer;
      ++k;  // its MLP half
      continue;
    }
    flush();
    switch (u.kind) {
      case UnitKind::kEmbedding:
        words.push_back("emb");
        break;
      case UnitKind::kAttention:
        words.push_back(fmt::format("{}a", u.layer + 1));
        break;
      case UnitKind::kMlp:
        words.push_back(fmt::format("{}m", u.layer + 1));
        break;
      case UnitKind::kFinalNorm:
        words.push_back("norm");
        break;
      case UnitKind::kOutput:
        words.push_back("out");
        break;
    }
  }
  flush();
  std::string label;
  for (const std::string& w : words) label += (label.empty() ? "" : " ") + w;
  return label;
}

std::vector<UnitCosts> rank_units(const TransformerSetup& setup, double b_rank);

// A balanced split: contiguous groups of units, by a min-max partition of F + I + W per microbatch under the
// device's memory (cost_models/balanced_split.h).
std::vector<int> balanced_starts(const TransformerSetup& setup, const std::vector<UnitCosts>& units, double b,
                                 int stages) {
  const Device d(setup);
  std::vector<PartitionItem> items;
  for (const UnitCosts& u : units) {
    StageCosts alone;
    set_parameters_and_optimizer(alone, setup, d, b, stages, u.matrix_params, u.other_params,
                                 {0, u.matrix_optimizer_bytes});
    items.push_back({u.forward_s + u.backward_input_s + u.backward_weight_s,
                     alone.parameter_bytes + alone.gradient_bytes + alone.optimizer_bytes,
                     u.activation_bytes});
  }
  try {
    return min_max_partition(items, stages, setup.profile.usable_memory_bytes());
  } catch (const InputError& e) {
    throw InputError(fmt::format("layer_split balanced on {}, microbatch size {:g}: {}", setup.profile.source,
                                 b, e.what()));
  }
}

std::vector<StageCosts> balanced_stage_costs(const TransformerSetup& setup, double b, int stages) {
  const Device d(setup);
  const std::vector<UnitCosts> units = rank_units(setup, b);
  std::vector<int> starts = setup.balanced_unit_starts.empty() ? balanced_starts(setup, units, b, stages)
                                                               : setup.balanced_unit_starts;
  if (static_cast<int>(starts.size()) != stages)
    throw InputError(
        fmt::format("layer_split balanced: {} pinned stage starts for {} stages", starts.size(), stages));
  starts.push_back(static_cast<int>(units.size()));
  const double recompute_working_bytes =
      attention_bytes(setup.model, b, setup.parallel.tensor, setup.parallel.sequence_parallel).full +
      mlp_bytes(setup.model, b, setup.parallel.tensor, setup.parallel.sequence_parallel).full;
  std::vector<StageCosts> result(stages);
  for (int i = 0; i < stages; ++i) {
    StageCosts& c = result[i];
    double matrix_params = 0, other_params = 0;
    MatrixOptimizerWork matrix_work;
    for (int k = starts[i]; k < starts[i + 1]; ++k) {
      const UnitCosts& u = units[k];
      c.forward_s += u.forward_s;
      c.backward_input_s += u.backward_input_s;
      c.backward_weight_s += u.backward_weight_s;
      c.activation_bytes += u.activation_bytes;
      c.weight_grad_activation_bytes += u.weight_grad_activation_bytes;
      c.model_flops += u.model_flops;
      matrix_params += u.matrix_params;
      other_params += u.other_params;
      matrix_work.seconds += u.matrix_optimizer_s;
      matrix_work.state_bytes += u.matrix_optimizer_bytes;
      c.embedding = c.embedding || u.kind == UnitKind::kEmbedding;
      c.output = c.output || u.kind == UnitKind::kOutput;
      // A layer counts when its MLP half (the second) is here and so is its attention half.
      if (u.kind == UnitKind::kMlp && k > starts[i]) ++c.layers;
      const bool layer_part = u.kind == UnitKind::kAttention || u.kind == UnitKind::kMlp;
      if (layer_part && setup.model.recompute == Recompute::kFull) {
        c.recompute_working_bytes = recompute_working_bytes;
        // A stage that starts at an MLP half keeps that half's input, which its attention half would hold.
        if (u.kind == UnitKind::kMlp && k == starts[i]) {
          c.activation_bytes += 2.0 * setup.model.seq_len * b * setup.model.hidden * d.bytes;
        }
      }
    }
    if (c.embedding && c.output && setup.model.tied_embeddings) {
      other_params -= static_cast<double>(setup.model.vocab) * setup.model.hidden;  // one shared matrix
    }
    c.units = unit_range_label(units, starts[i], starts[i + 1]);
    set_parameters_and_optimizer(c, setup, d, b, stages, matrix_params, other_params, matrix_work);
  }
  return result;
}

}  // namespace

namespace {

// Element-wise passes over the activations a layer part makes, forward and in I (a full recompute reruns the
// forward's inside I), in seconds: passes x the bytes without recomputation / bandwidth.
struct ElementwiseSeconds {
  double forward, backward_input;
};
ElementwiseSeconds elementwise_seconds(const TransformerModel& t, const Device& d, double full_bytes) {
  const double forward = t.forward_elementwise_passes * full_bytes / d.bandwidth / d.elementwise_efficiency;
  const double backward = t.backward_elementwise_passes * full_bytes / d.bandwidth / d.elementwise_efficiency;
  return {forward, backward + (t.recompute == Recompute::kFull ? forward : 0)};
}

// The units of one rank's share b (a microbatch of b/c sequences under context parallelism).
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
  auto half = [&](UnitKind kind) {
    const bool attention = kind == UnitKind::kAttention;
    const LayerShapes shapes = attention ? attention_shapes(t, b, tp) : mlp_shapes(t, b, tp);
    const LayerShapes counted_shapes =
        attention ? attention_shapes(counted, b, tp) : mlp_shapes(counted, b, tp);
    const HalfBytes bytes = attention ? attention_bytes(t, b, tp, sp) : mlp_bytes(t, b, tp, sp);
    const Kernels kernels = attention ? attention_kernels(t) : mlp_kernels(t);
    const ElementwiseSeconds elementwise = elementwise_seconds(t, d, bytes.full);
    UnitCosts u;
    u.kind = kind;
    u.forward_s = gemm_seconds(d.forward, shapes.forward, d.attention_flops_per_s) + elementwise.forward +
                  kernels.forward * d.launch;
    u.backward_input_s = gemm_seconds(d.gemm, shapes.backward_input, d.attention_flops_per_s) +
                         elementwise.backward_input + kernels.backward_input * d.launch;
    u.backward_weight_s = gemm_seconds(d.weight, shapes.backward_weight) + kernels.backward_weight * d.launch;
    u.forward_s += collectives.forward / 2 + (attention ? ring.forward : 0);
    u.backward_input_s += collectives.backward_input / 2 + (attention ? ring.backward_input : 0);
    u.activation_bytes = bytes.stored;
    u.full_activation_bytes = bytes.full;
    u.model_flops = flops(counted_shapes.forward) + flops(counted_shapes.backward_input) +
                    flops(counted_shapes.backward_weight);
    u.matrix_params = (attention ? attention_parameters(t) : mlp_parameters(t)) / tp;
    // M_W in proportion to the half's weights.
    u.weight_grad_activation_bytes =
        weight_grad_activation_bytes(t, b, tp, sp) * u.matrix_params * tp / layer_parameters(t);
    const MatrixOptimizerWork work =
        matrix_optimizer_work(setup.optimizer, d.gemm, attention ? attention_matrices(t) : mlp_matrices(t));
    u.matrix_optimizer_s = work.seconds;
    u.matrix_optimizer_bytes = work.state_bytes;
    return u;
  };
  // Every layer's halves cost the same: computed once, copied per layer.
  UnitCosts attention = half(UnitKind::kAttention), mlp = half(UnitKind::kMlp);
  std::vector<UnitCosts> units = {embedding_unit(setup, d, b)};
  for (int layer = 0; layer < t.layers; ++layer) {
    attention.layer = mlp.layer = layer;
    units.push_back(attention);
    units.push_back(mlp);
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
  norm.other_params = 2 * h;
  units.push_back(norm);
  units.push_back(output_unit(setup, d, b));
  return units;
}

// Each op kind's time times its measured factor (hardware.op_time_scale): units or stages alike.
template <typename Costs>
std::vector<Costs> scaled_op_times(std::vector<Costs> items, const OpTimeScale& scale) {
  for (Costs& c : items) {
    c.forward_s *= scale.forward;
    c.backward_input_s *= scale.backward_input;
    c.backward_weight_s *= scale.backward_weight;
  }
  return items;
}

std::vector<StageCosts> predicted_stage_costs(const TransformerSetup& setup, double b, int stages);

}  // namespace

std::vector<UnitCosts> transformer_units(const TransformerSetup& setup, double b) {
  return scaled_op_times(rank_units(setup, rank_microbatch(setup, b)), setup.profile.op_time_scale);
}

std::vector<int> balanced_unit_starts(const TransformerSetup& setup, double microbatch_size, int stages) {
  const double b = rank_microbatch(setup, microbatch_size);
  return balanced_starts(setup, rank_units(setup, b), b, stages);
}

std::vector<StageCosts> transformer_stage_costs(const TransformerSetup& setup, double microbatch_size,
                                                int stages) {
  const double b = rank_microbatch(setup, microbatch_size);  // one context-parallel rank's share
  return scaled_op_times(setup.split == LayerSplit::kBalanced ? balanced_stage_costs(setup, b, stages)
                                                              : predicted_stage_costs(setup, b, stages),
                         setup.profile.op_time_scale);
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
  const double layer_f = gemm_seconds(d.forward, shapes.forward, d.attention_flops_per_s) +
                         elementwise.forward + (attention.forward + mlp.forward) * d.launch +
                         collectives.forward + ring.forward;
  const double layer_i = gemm_seconds(d.gemm, shapes.backward_input, d.attention_flops_per_s) +
                         elementwise.backward_input +
                         (attention.backward_input + mlp.backward_input) * d.launch +
                         collectives.backward_input + ring.backward_input;
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
    const double matrix_params = c.layers * layer_parameters(t) / tp;
    double other_params = 0;
    if (c.embedding) {
      const UnitCosts u = embedding_unit(setup, d, b);
      c.forward_s += u.forward_s;
      c.backward_weight_s += u.backward_weight_s;
      other_params += u.other_params;
    }
    if (c.output) {
      const UnitCosts u = output_unit(setup, d, b);
      c.forward_s += u.forward_s;
      c.backward_input_s += u.backward_input_s;
      c.backward_weight_s += u.backward_weight_s;
      c.activation_bytes += u.activation_bytes;
      c.weight_grad_activation_bytes += u.weight_grad_activation_bytes;
      c.model_flops += u.model_flops;
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

namespace {

// The model's derived times obey the bound of computed times, its bytes the same limits as values read from
// a scenario (base/value_ranges.h), so that the engine's sums cannot overflow unchecked.
void check_derived_ranges(const std::vector<StageCosts>& stages) {
  for (size_t i = 0; i < stages.size(); ++i) {
    const StageCosts& c = stages[i];
    const std::pair<const char*, double> times[] = {
        {"forward", c.forward_s},
        {"backward (I + W)", c.backward_input_s + c.backward_weight_s},
        {"optimizer", c.optimizer_s},
        {"transfer", c.transfer_s}};
    for (const auto& [what, seconds] : times) {
      if (!computed_time_in_range(seconds * 1e9)) {
        throw InputError(
            fmt::format("model: stage {}'s {} time is {:.3g} s; expected {} (fewer layers per stage, "
                        "a smaller model or microbatch, a faster link)",
                        i + 1, what, seconds, computed_time_range_text()));
      }
    }
    const std::pair<const char*, double> bytes[] = {
        {"activation", c.activation_bytes}, {"transfer", c.transfer_bytes}, {"parameter", c.parameter_bytes}};
    for (const auto& [what, value] : bytes) {
      if (!checked_bytes(value)) {
        throw InputError(fmt::format("model: stage {}'s {} bytes are {:.3g}; expected {}", i + 1, what, value,
                                     bytes_range_text()));
      }
    }
  }
}

}  // namespace

TransformerCostModel::TransformerCostModel(const TransformerSetup& setup, double microbatch_size,
                                           const PipelineLayout& layout)
    : stages_(transformer_stage_costs(setup, microbatch_size, layout.stages)),
      host_overhead_s_(setup.profile.host_overhead_us * 1e-6),
      overlap_grad_reduce_(setup.parallel.overlap_grad_reduce) {
  check_derived_ranges(stages_);
}

// Each op also pays the profile's host overhead once (the host issuing it and waiting for it; 0 when the
// profile did not measure it): B, one op, once.
TimeNs TransformerCostModel::duration(const Action& action) const {
  const StageCosts& c = stages_.at(action.stage);
  auto ns = [this](double seconds) {
    return static_cast<TimeNs>(std::llround((seconds + host_overhead_s_) * 1e9));
  };
  switch (action.kind) {
    case OpKind::F:
      return ns(c.forward_s);
    case OpKind::B:
      return ns(c.backward_input_s + c.backward_weight_s);
    case OpKind::I:
      return ns(c.backward_input_s);
    case OpKind::W:
      return ns(c.backward_weight_s);
    case OpKind::U:
      // Behind a barrier with overlap, only the reduction's exposed part is the step's (before_barrier_ns).
      if (overlap_grad_reduce_ && action.synchronized) {
        return ns(c.optimizer_s - c.gradient_reduce_s + c.gradient_reduce_exposed_s);
      }
      return ns(c.optimizer_s);
  }
  return 0;
}

TimeNs TransformerCostModel::before_barrier_ns(const Action& step) const {
  if (!overlap_grad_reduce_ || step.kind != OpKind::U || !step.synchronized) return 0;
  return static_cast<TimeNs>(std::llround(stages_.at(step.stage).gradient_reduce_exposed_s * 1e9));
}

Bytes TransformerCostModel::activation_bytes(int stage) const {
  return computed_bytes(stages_.at(stage).activation_bytes, "a stage's activations per microbatch");
}

Bytes TransformerCostModel::weight_grad_activation_bytes(int stage) const {
  return computed_bytes(stages_.at(stage).weight_grad_activation_bytes,
                        "a stage's held weight-gradient inputs");
}

Bytes TransformerCostModel::transfer_bytes(int stage) const {
  return computed_bytes(stages_.at(stage).transfer_bytes, "a stage's transfer");
}

}  // namespace pipesim
