#include "cost_models/transformer_costs.h"

#include <fmt/format.h>

#include <cmath>

#include "cost_models/balanced_split.h"
#include "sim/errors.h"
#include "sim/value_ranges.h"

namespace pipesim {
namespace {

// C[m x n] = A[m x k] * B[k x n]; `count` independent copies (a strided batched GEMM) run as one GEMM with
// the batch stacked along m, which is how they fill the device.
struct Gemm {
  double m, n, k;
  double count = 1;
};

double gemm_seconds(const GemmTable& table, const std::vector<Gemm>& gemms) {
  double seconds = 0;
  for (const Gemm& g : gemms) seconds += table.seconds(g.m * g.count, g.n, g.k);
  return seconds;
}

// Kernels one layer launches in Megatron-LM's GPT layer (no fusion beyond bias-GeLU and bias-dropout-add).
constexpr double kForwardKernels = 17;
constexpr double kBackwardInputKernels = 20;
constexpr double kBackwardWeightKernels = 10;
// Of those, the attention half's (layer norm, QKV, scores, softmax, dropout, context, projection,
// bias-dropout-add and their backwards); the MLP half launches the rest.
constexpr double kAttentionForwardKernels = 11;
constexpr double kAttentionBackwardInputKernels = 13;
constexpr double kAttentionBackwardWeightKernels = 5;
// M_B = s·b(34h + 5·a·s) splits as Korthikanti et al. count it: the attention half stores its layer norm's
// input (2sbh) and 11sbh + 5as²b; the MLP half its layer norm's input (2sbh) and 19sbh. (16-bit bytes.)
constexpr double kAttentionActivationPerToken = 13;  // × h, plus 5·a·s
constexpr double kMlpActivationPerToken = 21;        // × h
// Output layer and cross-entropy: fp32 logits; bytes moved per logit by the loss (forward: max, exp, sum,
// normalize; backward: softmax minus one-hot).
constexpr double kLossForwardBytesPerLogit = 16;
constexpr double kLossBackwardBytesPerLogit = 8;
constexpr double kNewtonSchulzIterations = 5;

struct LayerShapes {
  std::vector<Gemm> forward, backward_input, backward_weight;
};

// The GEMMs of a layer's attention half: QKV, the attention's batched GEMMs, the projection.
LayerShapes attention_shapes(const TransformerModel& t, double b) {
  const double s = t.seq_len, h = t.hidden, tokens = s * b, d = h / t.heads, batch = b * t.heads;
  LayerShapes shapes;
  shapes.forward = {{tokens, 3 * h, h}, {tokens, h, h}, {s, s, d, batch}, {s, d, s, batch}};
  shapes.backward_input = {{tokens, h, 3 * h}, {tokens, h, h},   {s, s, d, batch},
                           {s, d, s, batch},   {s, d, s, batch}, {s, d, s, batch}};
  shapes.backward_weight = {{h, 3 * h, tokens}, {h, h, tokens}};
  return shapes;
}

// The GEMMs of a layer's MLP half: up and down.
LayerShapes mlp_shapes(const TransformerModel& t, double b) {
  const double h = t.hidden, tokens = t.seq_len * b;
  return {{{tokens, 4 * h, h}, {tokens, h, 4 * h}},
          {{tokens, h, 4 * h}, {tokens, 4 * h, h}},
          {{h, 4 * h, tokens}, {4 * h, h, tokens}}};
}

// The GEMMs of one layer: both halves.
LayerShapes layer_shapes(const TransformerModel& t, double b) {
  LayerShapes shapes = attention_shapes(t, b);
  const LayerShapes mlp = mlp_shapes(t, b);
  shapes.forward.insert(shapes.forward.end(), mlp.forward.begin(), mlp.forward.end());
  shapes.backward_input.insert(shapes.backward_input.end(), mlp.backward_input.begin(),
                               mlp.backward_input.end());
  shapes.backward_weight.insert(shapes.backward_weight.end(), mlp.backward_weight.begin(),
                                mlp.backward_weight.end());
  return shapes;
}

double scale_16bit(const TransformerModel& t) {
  return dtype_bytes(t.dtype) / 2.0;
}

// Optimizer state bytes per parameter and bytes one step reads and writes per parameter.
struct OptimizerBytes {
  double state;
  double traffic;
};

OptimizerBytes optimizer_bytes(OptimizerType type, bool matrix_param) {
  // Reads the 16-bit gradient and the fp32 state, writes the state and the 16-bit weights.
  constexpr OptimizerBytes kAdamW{12, 2 + 12 + 12 + 2};
  constexpr OptimizerBytes kSgd{4, 2 + 4 + 4 + 2};
  constexpr OptimizerBytes kMuon{8, 2 + 8 + 8 + 2};
  switch (type) {
    case OptimizerType::kAdamW:
      return kAdamW;
    case OptimizerType::kSgd:
      return kSgd;
    case OptimizerType::kMuon:
      return matrix_param ? kMuon : kAdamW;
  }
  return kAdamW;
}

// Muon orthogonalizes each r x c update (r <= c) with Newton-Schulz: per iteration X·Xᵀ, A·A and B·X.
using MatrixShapes = std::vector<std::pair<double, double>>;
MatrixShapes attention_matrices(double h) {
  return {{h, 3 * h}, {h, h}};
}
MatrixShapes mlp_matrices(double h) {
  return {{h, 4 * h}, {h, 4 * h}};
}

double newton_schulz_seconds(const GemmTable& table, const MatrixShapes& matrices) {
  double seconds = 0;
  for (const auto& [rows, cols] : matrices) {
    seconds += gemm_seconds(table, {{rows, rows, cols}, {rows, rows, rows}, {rows, cols, rows}});
  }
  return kNewtonSchulzIterations * seconds;
}

double newton_schulz_seconds(const GemmTable& table, double h) {
  MatrixShapes layer = attention_matrices(h);
  for (const auto& m : mlp_matrices(h)) layer.push_back(m);
  return newton_schulz_seconds(table, layer);
}

// What every part of the model needs from the setup.
struct Device {
  const GemmTable& gemm;
  double bandwidth;  // bytes/s
  double launch;     // s
  double bytes;      // per element of the model's dtype
  explicit Device(const TransformerSetup& setup)
      : gemm(setup.profile.gemm_table(setup.model.dtype)),
        bandwidth(setup.profile.memory_bandwidth_gb_per_s * 1e9),
        launch(setup.profile.launch_overhead_us * 1e-6),
        bytes(dtype_bytes(setup.model.dtype)) {}
};

// Gather the token rows and write the embeddings; the backward scatters their gradients (a W op).
UnitCosts embedding_unit(const TransformerSetup& setup, const Device& d, double b) {
  const double traffic = 2 * setup.model.seq_len * b * setup.model.hidden * d.bytes;
  UnitCosts u;
  u.kind = UnitKind::kEmbedding;
  u.forward_s = traffic / d.bandwidth + 2 * d.launch;
  u.backward_weight_s = traffic / d.bandwidth + 2 * d.launch;
  u.other_params = static_cast<double>(setup.model.vocab) * setup.model.hidden;
  return u;
}

// The output layer and the cross-entropy over fp32 logits.
UnitCosts output_unit(const TransformerSetup& setup, const Device& d, double b) {
  const double tokens = static_cast<double>(setup.model.seq_len) * b, h = setup.model.hidden,
               vocab = setup.model.vocab;
  UnitCosts u;
  u.kind = UnitKind::kOutput;
  u.forward_s = d.gemm.seconds(tokens, vocab, h) + kLossForwardBytesPerLogit * tokens * vocab / d.bandwidth +
                4 * d.launch;
  u.backward_input_s = d.gemm.seconds(tokens, h, vocab) +
                       kLossBackwardBytesPerLogit * tokens * vocab / d.bandwidth + 4 * d.launch;
  u.backward_weight_s = d.gemm.seconds(h, vocab, tokens) + 2 * d.launch;
  // The output layer's input (for its weight gradient) and the fp32 softmax of the logits.
  u.activation_bytes = tokens * h * d.bytes + 4 * tokens * vocab;
  u.weight_grad_activation_bytes = tokens * h * d.bytes;
  u.other_params = vocab * h;
  return u;
}

// Parameters, their bytes, the optimizer's state and step time, and the transfer to the next stage.
void set_parameters_and_optimizer(StageCosts& c, const TransformerSetup& setup, const Device& d, double b,
                                  int stages, double matrix_params, double other_params,
                                  double newton_schulz_s) {
  c.parameters = matrix_params + other_params;
  c.parameter_bytes = c.parameters * d.bytes;
  c.gradient_bytes = c.parameters * d.bytes;
  const OptimizerBytes on_matrix = optimizer_bytes(setup.optimizer.type, true);
  const OptimizerBytes on_other = optimizer_bytes(setup.optimizer.type, false);
  const bool override_state = setup.optimizer.state_bytes_per_param >= 0;
  c.optimizer_bytes = override_state ? c.parameters * setup.optimizer.state_bytes_per_param
                                     : matrix_params * on_matrix.state + other_params * on_other.state;
  c.optimizer_s =
      (matrix_params * on_matrix.traffic + other_params * on_other.traffic) / d.bandwidth + d.launch;
  if (setup.optimizer.type == OptimizerType::kMuon) c.optimizer_s += newton_schulz_s;
  c.transfer_bytes = setup.model.seq_len * b * setup.model.hidden * d.bytes;
  c.transfer_s = stages > 1 ? transfer_seconds(setup.profile, c.transfer_bytes) : 0;
}

}  // namespace

int dtype_bytes(const std::string& dtype) {
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "fp32") return 4;
  throw InputError(fmt::format("dtype '{}': expected bf16, fp16 or fp32", dtype));
}

double layer_forward_flops(const TransformerModel& t, double b) {
  const double s = t.seq_len, h = t.hidden;
  return s * b * h * (24 * h + 4 * s);
}

double layer_backward_input_flops(const TransformerModel& t, double b) {
  const double s = t.seq_len, h = t.hidden;
  return s * b * h * (24 * h + 8 * s);
}

double layer_backward_weight_flops(const TransformerModel& t, double b) {
  const double h = t.hidden;
  return 24.0 * t.seq_len * b * h * h;
}

double layer_activation_bytes(const TransformerModel& t, double b) {
  const double s = t.seq_len;
  return s * b * (34.0 * t.hidden + 5.0 * t.heads * s) * scale_16bit(t);
}

double layer_weight_grad_activation_bytes(const TransformerModel& t, double b) {
  return 32.0 * t.seq_len * b * t.hidden * scale_16bit(t);
}

double layer_parameters(const TransformerModel& t) {
  return 12.0 * t.hidden * t.hidden;
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

std::string layer_split_name(LayerSplit split) {
  switch (split) {
    case LayerSplit::kEven:
      return "even";
    case LayerSplit::kZeroBubble:
      return "zb";
    case LayerSplit::kBalanced:
      return "balanced";
  }
  return "even";
}

std::string optimizer_name(OptimizerType type) {
  switch (type) {
    case OptimizerType::kAdamW:
      return "adamw";
    case OptimizerType::kSgd:
      return "sgd";
    case OptimizerType::kMuon:
      return "muon";
  }
  return "adamw";
}

double transfer_seconds(const HardwareProfile& profile, double bytes) {
  if (!profile.link) return 0;
  return bytes / (profile.link->bandwidth_gb_per_s * 1e9) + profile.link->latency_us * 1e-6;
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

// A balanced split: contiguous groups of units, by a min-max partition of F + I + W per microbatch under the
// device's memory (cost_models/balanced_split.h).
std::vector<StageCosts> balanced_stage_costs(const TransformerSetup& setup, double b, int stages) {
  const Device d(setup);
  const std::vector<UnitCosts> units = transformer_units(setup, b);
  std::vector<PartitionItem> items;
  for (const UnitCosts& u : units) {
    StageCosts alone;
    set_parameters_and_optimizer(alone, setup, d, b, stages, u.matrix_params, u.other_params, 0);
    items.push_back({u.forward_s + u.backward_input_s + u.backward_weight_s,
                     alone.parameter_bytes + alone.gradient_bytes + alone.optimizer_bytes,
                     u.activation_bytes});
  }
  std::vector<int> starts;
  try {
    starts = min_max_partition(items, stages, setup.profile.memory_capacity_gb * 1e9);
  } catch (const InputError& e) {
    throw InputError(fmt::format("layer_split balanced on {}, microbatch size {:g}: {}", setup.profile.source,
                                 b, e.what()));
  }
  starts.push_back(static_cast<int>(units.size()));
  std::vector<StageCosts> result(stages);
  for (int i = 0; i < stages; ++i) {
    StageCosts& c = result[i];
    double matrix_params = 0, other_params = 0, newton_schulz_s = 0;
    for (int k = starts[i]; k < starts[i + 1]; ++k) {
      const UnitCosts& u = units[k];
      c.forward_s += u.forward_s;
      c.backward_input_s += u.backward_input_s;
      c.backward_weight_s += u.backward_weight_s;
      c.activation_bytes += u.activation_bytes;
      c.weight_grad_activation_bytes += u.weight_grad_activation_bytes;
      matrix_params += u.matrix_params;
      other_params += u.other_params;
      newton_schulz_s += u.newton_schulz_s;
      c.embedding = c.embedding || u.kind == UnitKind::kEmbedding;
      c.output = c.output || u.kind == UnitKind::kOutput;
      // A layer counts when its MLP half (the second) is here and so is its attention half.
      if (u.kind == UnitKind::kMlp && k > starts[i]) ++c.layers;
    }
    c.units = unit_range_label(units, starts[i], starts[i + 1]);
    set_parameters_and_optimizer(c, setup, d, b, stages, matrix_params, other_params, newton_schulz_s);
  }
  return result;
}

}  // namespace

std::vector<UnitCosts> transformer_units(const TransformerSetup& setup, double b) {
  const TransformerModel& t = setup.model;
  const Device d(setup);
  const double s = t.seq_len, h = t.hidden, tokens = s * b, scale = scale_16bit(t);
  const double attention_act = tokens * (kAttentionActivationPerToken * h + 5.0 * t.heads * s) * scale;
  const double mlp_act = tokens * kMlpActivationPerToken * h * scale;
  auto half = [&](UnitKind kind, int layer) {
    const bool attention = kind == UnitKind::kAttention;
    const LayerShapes shapes = attention ? attention_shapes(t, b) : mlp_shapes(t, b);
    const double act = attention ? attention_act : mlp_act;
    UnitCosts u;
    u.kind = kind;
    u.layer = layer;
    u.forward_s =
        gemm_seconds(d.gemm, shapes.forward) + t.forward_elementwise_passes * act / d.bandwidth +
        (attention ? kAttentionForwardKernels : kForwardKernels - kAttentionForwardKernels) * d.launch;
    u.backward_input_s = gemm_seconds(d.gemm, shapes.backward_input) +
                         t.backward_elementwise_passes * act / d.bandwidth +
                         (attention ? kAttentionBackwardInputKernels
                                    : kBackwardInputKernels - kAttentionBackwardInputKernels) *
                             d.launch;
    u.backward_weight_s = gemm_seconds(d.gemm, shapes.backward_weight) +
                          (attention ? kAttentionBackwardWeightKernels
                                     : kBackwardWeightKernels - kAttentionBackwardWeightKernels) *
                              d.launch;
    u.activation_bytes = act;
    // M_W in proportion to the half's weights (4h² of the layer's 12h² are attention's).
    u.matrix_params = (attention ? 4.0 : 8.0) * h * h;
    u.weight_grad_activation_bytes =
        layer_weight_grad_activation_bytes(t, b) * u.matrix_params / layer_parameters(t);
    u.newton_schulz_s = newton_schulz_seconds(d.gemm, attention ? attention_matrices(h) : mlp_matrices(h));
    return u;
  };
  std::vector<UnitCosts> units = {embedding_unit(setup, d, b)};
  for (int layer = 0; layer < t.layers; ++layer) {
    units.push_back(half(UnitKind::kAttention, layer));
    units.push_back(half(UnitKind::kMlp, layer));
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
  norm.weight_grad_activation_bytes = row_bytes;
  norm.other_params = 2 * h;
  units.push_back(norm);
  units.push_back(output_unit(setup, d, b));
  return units;
}

std::vector<StageCosts> transformer_stage_costs(const TransformerSetup& setup, double b, int stages) {
  if (setup.split == LayerSplit::kBalanced) return balanced_stage_costs(setup, b, stages);
  const TransformerModel& t = setup.model;
  const Device d(setup);
  const LayerShapes shapes = layer_shapes(t, b);
  const double act = layer_activation_bytes(t, b);
  const double layer_f = gemm_seconds(d.gemm, shapes.forward) +
                         t.forward_elementwise_passes * act / d.bandwidth + kForwardKernels * d.launch;
  const double layer_i = gemm_seconds(d.gemm, shapes.backward_input) +
                         t.backward_elementwise_passes * act / d.bandwidth + kBackwardInputKernels * d.launch;
  const double layer_w = gemm_seconds(d.gemm, shapes.backward_weight) + kBackwardWeightKernels * d.launch;

  const std::vector<int> layers = split_layers(t.layers, stages, setup.split);
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
    c.weight_grad_activation_bytes = c.layers * layer_weight_grad_activation_bytes(t, b);
    const double matrix_params = c.layers * layer_parameters(t);
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
      other_params += u.other_params;
    }
    set_parameters_and_optimizer(c, setup, d, b, stages, matrix_params, other_params,
                                 c.layers * newton_schulz_seconds(d.gemm, t.hidden));
  }
  return result;
}

namespace {

// The model's derived times and bytes obey the same limits as values read from a scenario
// (sim/value_ranges.h), so that the engine's sums cannot overflow.
void check_derived_ranges(const std::vector<StageCosts>& stages) {
  for (size_t i = 0; i < stages.size(); ++i) {
    const StageCosts& c = stages[i];
    const std::pair<const char*, double> times[] = {
        {"forward", c.forward_s},
        {"backward (I + W)", c.backward_input_s + c.backward_weight_s},
        {"optimizer", c.optimizer_s},
        {"transfer", c.transfer_s}};
    for (const auto& [what, seconds] : times) {
      if (!checked_ms_to_ns(seconds * 1e3)) {
        throw InputError(
            fmt::format("model: stage {}'s {} time is {:.3g} s; expected {} (fewer layers per stage, "
                        "a smaller model or microbatch)",
                        i + 1, what, seconds, time_range_text()));
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
    : stages_(transformer_stage_costs(setup, microbatch_size, layout.stages)) {
  check_derived_ranges(stages_);
}

TimeNs TransformerCostModel::duration(const Action& action) const {
  const StageCosts& c = stages_.at(action.stage);
  auto ns = [](double seconds) { return static_cast<TimeNs>(std::llround(seconds * 1e9)); };
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
      return ns(c.optimizer_s);
  }
  return 0;
}

Bytes TransformerCostModel::activation_bytes(int stage) const {
  return static_cast<Bytes>(std::llround(stages_.at(stage).activation_bytes));
}

Bytes TransformerCostModel::weight_grad_activation_bytes(int stage) const {
  return static_cast<Bytes>(std::llround(stages_.at(stage).weight_grad_activation_bytes));
}

Bytes TransformerCostModel::transfer_bytes(int stage) const {
  return static_cast<Bytes>(std::llround(stages_.at(stage).transfer_bytes));
}

}  // namespace pipesim
