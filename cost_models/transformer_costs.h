#pragma once
// Costs predicted from a transformer and a hardware profile (docs/design.md §6).
//
// Per layer and microbatch of b samples of s tokens, hidden h, a query heads of size d (h/a unless the model
// says head_dim), k key/value heads (GQA; k = a is multi-head attention), MLP width f; P = the layer's matrix
// parameters:
//   params P = 2h·a·d + 2h·k·d (attention) + 2h·f (GeLU MLP) or 3h·f (SwiGLU MLP); 12h² for d = h/a, k = a,
//          f = 4h
//   FLOPs  F = 2sbP + 4s²b·ad, I = 2sbP + 8s²b·ad (+ 2s²b·ad: flash attention recomputes the scores),
//          W = 2sbP;
//          recomputation adds to I what it reruns (selective: eager attention's scores; full: all of F)
//   bytes  M_B, M_W: docs/design.md §6 (Korthikanti et al. 2022 for eager attention with dropout:
//          s·b(34h + 5·a·s), M_W = 32·s·b·h, in 16-bit), less under flash attention and recomputation
//   plus vocab·h for the embedding (first stage) and for the output layer (last stage); tied embeddings
//   share one matrix where both ends are on one stage, and keep a copy on each end otherwise (Megatron).
// Time of an op = Σ over its GEMMs of FLOPs / the profile's achieved rate at that GEMM's shape
//               + element-wise kernels (layer norm, softmax, dropout, GeLU, residual): passes·M_B / memory
//               bandwidth
//               + kernels launched · launch overhead.
// The shape dependence is what makes small microbatches slower per FLOP; it comes from the profile.
#include <string>
#include <utility>
#include <vector>

#include "base/name_table.h"
#include "sim/cost_model.h"
#include "sim/layout.h"
#include "spec/transformer_model.h"

namespace pipesim {

// The balanced split's first unit of each of `stages` stages for microbatches of `microbatch_size`.
std::vector<int> balanced_unit_starts(const TransformerSetup& setup, double microbatch_size, int stages);

// Seconds a tensor-parallel group of the setup spends in collectives per layer: forward and input gradient
// (the blocking all-reduces, or reduce-scatter plus all-gather, of tokens x h activations); 0 for t = 1.
struct TensorParallelSeconds {
  double forward = 0;
  double backward_input = 0;
};
TensorParallelSeconds tensor_parallel_layer_seconds(const TransformerSetup& setup, double microbatch_size,
                                                    int pipeline_stages);
// What c context-parallel ranks need of the model, as an "expected ..." text, or empty when it has it: flash
// attention (ring attention runs fused kernels) and 2c dividing the sequence (two chunks per rank, balancing
// the causal work).
std::string context_parallel_requirement(const TransformerModel& model, int context);
// Seconds a context-parallel rank's ring attention exposes per layer (see ParallelConfig): forward and input
// gradient; 0 for c = 1.
TensorParallelSeconds context_parallel_layer_seconds(const TransformerSetup& setup, double microbatch_size,
                                                     int pipeline_stages);
// Seconds one stage's gradient reduction over the d x c ranks holding its weights takes at a step (0 for 1).
double data_parallel_reduce_seconds(const TransformerSetup& setup, double gradient_bytes,
                                    int pipeline_stages);

// Flash attention's fused kernel runs its products (the causal share) at this share of the GEMM grid's best
// rate, unless the profile's fit says otherwise (fit.attention_efficiency). An assumption: FlashAttention-2
// reports about half of an A100's peak and more; PyTorch's SDPA flash kernel on an H200 fitted 0.25 alongside
// the element-wise term (gpu_calibration/README.md, "The H200 measurement").
inline constexpr double kDefaultFlashAttentionEfficiency = 0.5;
double flash_attention_efficiency(const HardwareProfile& profile);

// Per layer and microbatch (b may be fractional: the mean size when a batch does not divide evenly).
double layer_forward_flops(const TransformerModel& model, double microbatch_size);
double layer_backward_input_flops(const TransformerModel& model, double microbatch_size);
double layer_backward_weight_flops(const TransformerModel& model, double microbatch_size);
double layer_activation_bytes(const TransformerModel& model, double microbatch_size);              // M_B
double layer_weight_grad_activation_bytes(const TransformerModel& model, double microbatch_size);  // M_W
double layer_parameters(const TransformerModel& model);                                            // 12h²
double attention_parameters(const TransformerModel& model);  // 2h² + 2h·k·d
double mlp_parameters(const TransformerModel& model);        // 2hf or 3hf
// The whole model's parameters: layers, embedding, output layer (once when tied), final norm.
double model_parameters(const TransformerModel& model);
// Model FLOPs of one sample's forward and backward (no recomputation counted): what MFU divides by.
double model_flops_per_sample(const TransformerModel& model);
// Bytes one microbatch's activations take in a layer without recomputation (what element-wise kernels move).
double layer_full_activation_bytes(const TransformerModel& model, double microbatch_size);

// Layers per stage; throws InputError when a stage would get none (the first and last may have none under
// zb). Not for balanced, whose stages hold units rather than whole layers.
std::vector<int> split_layers(int layers, int stages, LayerSplit split);
// The setup's layers per stage for `stages` (virtual) stages: its explicit list, checked (one count per
// stage, summing to the model's layers, a stage without layers only at either end, where the embedding or
// the output layer is), or split_layers.
std::vector<int> stage_layer_counts(const TransformerSetup& setup, int stages);

// Each choice's name as scenarios spell it (base/name_table.h).
// "flash attention, SwiGLU MLP, GQA 8 kv heads, no recomputation": the modelling choices behind a figure.
std::string model_choices_text(const TransformerModel& model);

// What the model derives for one (virtual) stage, per microbatch unless said otherwise.
struct StageCosts {
  int layers = 0;     // whole layers (balanced: both halves on this stage)
  std::string units;  // balanced: the units held, e.g. "emb 1-3 4a" (a/m: attention/MLP half); else empty
  bool embedding = false;  // first stage
  bool output = false;     // last stage: output layer and loss
  double forward_s = 0;
  double backward_input_s = 0;
  double backward_weight_s = 0;
  double optimizer_s = 0;        // one step, its gradient reduction over the weights' replicas included
  double gradient_reduce_s = 0;  // of which the reduction
  // Of the reduction, what outlasts the stage's last gradient op when each unit's (layer's) gradients reduce
  // as that op makes them (overlap_grad_reduce): max(R / u, R - W (u - 1) / u) for u units, W = one
  // microbatch's weight-gradient time.
  double gradient_reduce_exposed_s = 0;
  double transfer_s = 0;  // one activation (or gradient) message to the next stage
  double parameters = 0;
  double parameter_bytes = 0;  // one copy of the weights
  double gradient_bytes = 0;
  double optimizer_bytes = 0;               // optimizer state, including fp32 master weights
  double activation_bytes = 0;              // M_B
  double weight_grad_activation_bytes = 0;  // M_W
  double transfer_bytes = 0;
  // Full recomputation: one layer's activations rebuilt during a backward, held while it runs.
  double recompute_working_bytes = 0;
  double model_flops = 0;  // F + I + W matmul FLOPs per microbatch without recomputation (for MFU)
};

std::vector<StageCosts> transformer_stage_costs(const TransformerSetup& setup, double microbatch_size,
                                                int stages);

// The units a balanced split places stage boundaries between: the embedding, each layer's attention half
// (first layer norm, QKV, attention, projection) and MLP half (second layer norm, MLP), the final layer norm
// and the output layer with the loss: 2·layers + 3 of them, in model order. A layer's two halves add up to
// the layer's F, I, W, M_B, M_W and parameters. Per microbatch of `microbatch_size` samples.
enum class UnitKind { kEmbedding, kAttention, kMlp, kFinalNorm, kOutput };
struct UnitCosts {
  UnitKind kind = UnitKind::kEmbedding;
  int layer = -1;  // 0-based layer of an attention or MLP half
  double forward_s = 0, backward_input_s = 0, backward_weight_s = 0;
  double activation_bytes = 0, weight_grad_activation_bytes = 0;
  double full_activation_bytes = 0;  // without recomputation (the working set a full recompute rebuilds)
  double model_flops = 0;            // F + I + W without recomputation
  double matrix_params = 0;          // the layers' weight matrices (Muon orthogonalizes these)
  double other_params = 0;           // embedding, output layer, final norm
  double matrix_optimizer_s = 0;  // Muon's Newton-Schulz or SOAP's rotations on this unit's matrices, a step
  double matrix_optimizer_bytes = 0;  // SOAP's preconditioners and bases for this unit's matrices
};
std::vector<UnitCosts> transformer_units(const TransformerSetup& setup, double microbatch_size);

// Link time of one message of `bytes` over the profile's link (0 when the profile has no link).
double transfer_seconds(const HardwareProfile& profile, double bytes);

class TransformerCostModel final : public CostModel {
 public:
  // One stage of costs per stage of the layout (virtual stages for interleaved schedules).
  TransformerCostModel(const TransformerSetup& setup, double microbatch_size, const PipelineLayout& layout);

  TimeNs duration(const Action& action) const override;
  bool durations_by_kind_and_stage() const override { return true; }
  // With parallel.overlap_grad_reduce: the stage's gradient reduction, which runs before the step's barrier.
  TimeNs before_barrier_ns(const Action& step) const override;
  Bytes activation_bytes(int stage) const override;
  Bytes weight_grad_activation_bytes(int stage) const override;
  Bytes transfer_bytes(int stage) const override;

  const std::vector<StageCosts>& stages() const { return stages_; }

 private:
  std::vector<StageCosts> stages_;
  double host_overhead_s_ = 0;  // per op: the profile's host_overhead_us
  bool overlap_grad_reduce_ = true;
};

}  // namespace pipesim
