#include "cost_models/transformer_costs.h"

#include <fmt/format.h>

#include <cmath>

#include "sim/errors.h"

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
// Output layer and cross-entropy: fp32 logits; bytes moved per logit by the loss (forward: max, exp, sum,
// normalize; backward: softmax minus one-hot).
constexpr double kLossForwardBytesPerLogit = 16;
constexpr double kLossBackwardBytesPerLogit = 8;
constexpr double kNewtonSchulzIterations = 5;

struct LayerShapes {
  std::vector<Gemm> forward, backward_input, backward_weight;
};

// The GEMMs of one layer: QKV, attention projection, MLP up, MLP down, and the attention's batched GEMMs.
LayerShapes layer_shapes(const TransformerModel& t, double b) {
  const double s = t.seq_len, h = t.hidden, tokens = s * b, d = h / t.heads, batch = b * t.heads;
  LayerShapes shapes;
  shapes.forward = {{tokens, 3 * h, h}, {tokens, h, h},   {tokens, 4 * h, h},
                    {tokens, h, 4 * h}, {s, s, d, batch}, {s, d, s, batch}};
  shapes.backward_input = {{tokens, h, 3 * h}, {tokens, h, h},   {tokens, h, 4 * h}, {tokens, 4 * h, h},
                           {s, s, d, batch},   {s, d, s, batch}, {s, d, s, batch},   {s, d, s, batch}};
  shapes.backward_weight = {{h, 3 * h, tokens}, {h, h, tokens}, {h, 4 * h, tokens}, {4 * h, h, tokens}};
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
double newton_schulz_seconds(const GemmTable& table, double h) {
  double seconds = 0;
  for (const auto& [rows, cols] :
       std::vector<std::pair<double, double>>{{h, 3 * h}, {h, h}, {h, 4 * h}, {h, 4 * h}}) {
    seconds += gemm_seconds(table, {{rows, rows, cols}, {rows, rows, rows}, {rows, cols, rows}});
  }
  return kNewtonSchulzIterations * seconds;
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
  return split == LayerSplit::kEven ? "even" : "zb";
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

std::vector<StageCosts> transformer_stage_costs(const TransformerSetup& setup, double b, int stages) {
  const TransformerModel& t = setup.model;
  const HardwareProfile& hw = setup.profile;
  const GemmTable& gemm = hw.gemm_table(t.dtype);
  const double bandwidth = hw.memory_bandwidth_gb_per_s * 1e9;
  const double launch = hw.launch_overhead_us * 1e-6;
  const double bytes = dtype_bytes(t.dtype);
  const double tokens = static_cast<double>(t.seq_len) * b, h = t.hidden, vocab = t.vocab;

  const LayerShapes shapes = layer_shapes(t, b);
  const double act = layer_activation_bytes(t, b);
  const double layer_f = gemm_seconds(gemm, shapes.forward) + t.forward_elementwise_passes * act / bandwidth +
                         kForwardKernels * launch;
  const double layer_i = gemm_seconds(gemm, shapes.backward_input) +
                         t.backward_elementwise_passes * act / bandwidth + kBackwardInputKernels * launch;
  const double layer_w = gemm_seconds(gemm, shapes.backward_weight) + kBackwardWeightKernels * launch;

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
      // Gather the token rows and write the embeddings; the backward scatters their gradients (a W op).
      const double traffic = 2 * tokens * h * bytes;
      c.forward_s += traffic / bandwidth + 2 * launch;
      c.backward_weight_s += traffic / bandwidth + 2 * launch;
      other_params += vocab * h;
    }
    if (c.output) {
      c.forward_s += gemm.seconds(tokens, vocab, h) + kLossForwardBytesPerLogit * tokens * vocab / bandwidth +
                     4 * launch;
      c.backward_input_s += gemm.seconds(tokens, h, vocab) +
                            kLossBackwardBytesPerLogit * tokens * vocab / bandwidth + 4 * launch;
      c.backward_weight_s += gemm.seconds(h, vocab, tokens) + 2 * launch;
      // The output layer's input (for its weight gradient) and the fp32 softmax of the logits.
      c.activation_bytes += tokens * h * bytes + 4 * tokens * vocab;
      c.weight_grad_activation_bytes += tokens * h * bytes;
      other_params += vocab * h;
    }
    c.parameters = matrix_params + other_params;
    c.parameter_bytes = c.parameters * bytes;
    c.gradient_bytes = c.parameters * bytes;
    const OptimizerBytes on_matrix = optimizer_bytes(setup.optimizer.type, true);
    const OptimizerBytes on_other = optimizer_bytes(setup.optimizer.type, false);
    const bool override_state = setup.optimizer.state_bytes_per_param >= 0;
    c.optimizer_bytes = override_state ? c.parameters * setup.optimizer.state_bytes_per_param
                                       : matrix_params * on_matrix.state + other_params * on_other.state;
    c.optimizer_s =
        (matrix_params * on_matrix.traffic + other_params * on_other.traffic) / bandwidth + launch;
    if (setup.optimizer.type == OptimizerType::kMuon)
      c.optimizer_s += c.layers * newton_schulz_seconds(gemm, h);
    c.transfer_bytes = tokens * h * bytes;
    c.transfer_s = stages > 1 ? transfer_seconds(hw, c.transfer_bytes) : 0;
  }
  return result;
}

TransformerCostModel::TransformerCostModel(const TransformerSetup& setup, double microbatch_size,
                                           const PipelineLayout& layout)
    : stages_(transformer_stage_costs(setup, microbatch_size, layout.stages)) {}

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
