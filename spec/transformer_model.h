#pragma once
// The transformer job as plain data: the model (sizes, attention, MLP, recomputation, dtype, the features the
// costs do not model yet), how its layers split over stages, the optimizer, the job around the pipeline
// (tensor, context and data parallelism, ZeRO) and the hardware profile, with their name tables. What each
// costs is cost_models/transformer/ (cost_model.h); the scenario's `model:`, `optimizer:` and `parallel:`
// sections (io/model_section.h) and the importers (import/) fill these.
#include <algorithm>
#include <string>
#include <vector>

#include "base/name_table.h"
#include "spec/fp8_recipe.h"
#include "spec/hardware_profile.h"
#include "spec/latent_attention.h"
#include "spec/mixture_of_experts.h"
#include "spec/optimizer_kind.h"
#include "spec/unmodelled_features.h"

namespace pipesim {

// flash: fused attention that never stores the s x s scores and recomputes them in its backward (PyTorch
// SDPA, FlashAttention; Megatron's and torchtitan's default). eager: scores and softmax stored.
enum class AttentionKind { kFlash, kEager };
// gelu: up (h -> f), GeLU, down (f -> h). swiglu: gate and up (h -> f each), SiLU(gate) * up, down.
enum class MlpKind { kGelu, kSwiglu };
// layernorm: a scale and a bias per channel (GPT, BERT). rmsnorm: a scale only, no mean removed (Llama, Qwen,
// Mistral). The norms' work is part of the element-wise passes either way; what differs is the weights.
enum class NormKind { kLayerNorm, kRmsNorm };
// Activation recomputation (Korthikanti et al. 2022). selective: the attention core (scores, softmax,
// dropout) is recomputed in the backward, so nothing of size s² is stored (flash attention already does
// this: no change there). full: each layer keeps only its input and reruns its whole forward in the backward.
// op: torchtitan's op-level selective checkpointing (selective_ac_option "op"): each block saves its input,
// the attention kernel's output and every other matmul's output (in call order wq, wk, wv, wo, w1, w3, w2,
// the odd ones), and reruns the even matmuls (wk, wo, w3; a GeLU MLP's down projection) and every
// memory-bound op (norms, rotary, activation, residuals) inside the backward.
enum class Recompute { kNone, kSelective, kFull, kOp };

struct TransformerModel {
  int layers = 1;
  int hidden = 1;
  int heads = 1;
  int seq_len = 1;
  int vocab = 1;
  int kv_heads = 0;    // key/value heads; 0: heads (multi-head attention)
  int head_dim = 0;    // d, each head's width; 0: hidden / heads (Qwen3, Gemma: a·d != h)
  int ffn_hidden = 0;  // MLP width f; 0: 4h (gelu), or 8h/3 rounded up to a multiple of 256 (swiglu, Llama)
  MlpKind mlp = MlpKind::kGelu;
  NormKind norm = NormKind::kLayerNorm;
  bool tied_embeddings = false;  // the output layer reuses the embedding matrix
  AttentionKind attention = AttentionKind::kFlash;
  bool dropout = false;  // dropout after attention and MLP (and on attention probabilities when eager)
  // A causal mask (decoder LMs): flash attention skips the score tiles above the diagonal, about half its
  // work; eager attention computes every score and masks them (no time saved). FLOP counts for MFU count
  // the full s x s products either way (Megatron's convention).
  bool causal = true;
  Recompute recompute = Recompute::kNone;
  std::string dtype = "bf16";  // of weights, activations and GEMMs: bf16, fp16 or fp32
  MixtureOfExperts moe;        // moe.any(): the MLP of every layer after moe.dense_layers is a MoE
  LatentAttention mla;         // mla.any(): every layer's attention is multi-head latent attention
  // Multi-token prediction (DeepSeek-V3): modules after the last layer, each predicting one token further
  // (cost_models/transformer/mtp_modules.h); Megatron places them on the last pipeline stage.
  int mtp_layers = 0;
  // FP8 weight GEMMs (spec/fp8_recipe.h): kNone keeps every GEMM in dtype.
  Fp8Recipe fp8 = Fp8Recipe::kNone;

  // What the costs do not represent yet; a run refuses it unless told to show the dense figures.
  UnmodelledFeatures unmodelled;

  int key_value_heads() const { return kv_heads > 0 ? kv_heads : heads; }
  double head_size() const { return head_dim > 0 ? head_dim : static_cast<double>(hidden) / heads; }
  double query_width() const { return heads * head_size(); }                  // a·d: Q and the context
  double key_value_width() const { return key_value_heads() * head_size(); }  // k·d: K and V each
  int ffn() const;
  bool moe_layer(int layer) const { return moe.moe_layer(layer); }  // 0-based
  int moe_layers() const { return moe.any() ? std::max(0, layers - moe.dense_layers) / moe.layer_step : 0; }
  int norm_parameters() const;  // one norm's weights: 2h (scale, bias) or h (scale)
  // Bytes the element-wise kernels move per byte of activation they store (M_B). Defaults: Megatron-LM's GPT
  // layer without flash attention, fitted with the A100 profile to the Zero Bubble paper's profiled times
  // (calibrate/README.md, "The A100 fit").
  double forward_elementwise_passes = 4.5;
  double backward_elementwise_passes = 3.5;
};

// even: layers spread evenly (the first stages take the remainder). zb: as the Zero Bubble papers, the first
// and the last stage hold one layer fewer than the others (they also hold the embedding and the loss).
// balanced: stage boundaries between any two of the model's units (transformer_units below), placed by a
// min-max partition of their predicted compute time under the device's memory (cost_models/balanced_split.h).
// explicit: the layers of each (virtual) stage in model order, as given (TransformerSetup::stage_layers):
// Megatron's first/last-stage layer counts and layouts, torchtitan's stages with fewer layers.
enum class LayerSplit { kEven, kZeroBubble, kBalanced, kExplicit };

// adamw: mixed precision, fp32 master weights + two moments (12 bytes/param). sgd: fp32 master weights, no
// momentum (4). muon: fp32 master + momentum (8) on the layers' matrices, with 5 Newton-Schulz iterations per
// step; AdamW on the embedding and output layer. soap: AdamW's 12 bytes/param plus, per layer matrix r x c,
// fp32 L, R and their eigenbases (8 (r² + c²) bytes); per step three rotations of two GEMMs each and the
// two preconditioner products, and every precondition_frequency steps two eigendecompositions (9 n³ flops
// each, at the GEMM grid's n x n x n rate).

struct OptimizerSpec {
  OptimizerKind type = OptimizerKind::kAdamW;
  double state_bytes_per_param = -1;  // >= 0 overrides the type's figure for every parameter
  int precondition_frequency = 10;    // soap: steps between eigendecompositions
};

// The job around the pipeline (a scenario's `parallel:` section): each pipeline device is a group of `tensor`
// GPUs that split every layer as Megatron-LM's tensor parallelism does, and `data` replicas of the pipeline
// reduce their gradients at each optimizer step. Every figure the model derives is then per GPU.
//   tensor parallelism: column-parallel QKV and MLP-up GEMMs (output width / t), row-parallel projection and
//     MLP-down (input width / t), heads / t; per layer two all-reduces of the layer's activations (tokens x
//     h) in the forward and two in the input gradient (four with full recomputation: its forward reruns),
//     blocking the compute stream; with sequence parallelism each becomes a reduce-scatter plus an all-gather
//     (the same ring time) and the activations outside the split GEMMs are divided by t too (Korthikanti et
//     al.: 34/t + 5as/(ht) bytes per token and h instead of 10 + 24/t + 5as/(ht)). Vocabulary-parallel
//     embedding and output layer: vocab / t rows, one all-reduce of tokens x h each.
//   data parallelism: each stage's U op also reduces its gradients over the d replicas: a ring all-reduce of
//     the stage's gradient bytes (model dtype), or with ZeRO 1 and 2 a reduce-scatter of the gradients plus
//     an all-gather of the updated weights (the same ring time), with ZeRO-3 the reduce-scatter alone. With
//     overlap_grad_reduce (Megatron's
//     --overlap-grad-reduce, FSDP's and DDP's default) each layer's gradients reduce as the stage's last
//     gradient op of the step makes them, so only what outlasts that op is exposed
//     (StageCosts::gradient_reduce_exposed_s), and it runs before the step's barrier, overlapping the other
//     stages' remaining work; the step (gradient clipping's all-reduce, then the update) waits for every
//     stage's. Without it every reduction runs whole after the barrier, when all stages have finished their
//     backwards (Megatron's default). Asynchronous schedules have no barrier: a stage reduces whole at each
//     of its own steps.
//   ZeRO: 1 shards the optimizer state (and its step's work) over d, 2 also the gradients, 3 also the weights
//     (gathered for each F and I: an all-gather of the stage's weights per op, unit by unit, each unit's
//     gather overlapping the unit before it: the op takes max(compute, gathers) + one unit's gather; or, with
//     overlap_weight_gather false, compute + gathers).
//   Links: a group whose ranks share a node (ranks numbered tensor innermost, then context, data, pipeline:
//     cost_models/transformer/job_topology.h) runs on the profile's `link`, else on its `inter_node_link`.
//   context parallelism (c ranks, Megatron's and torchtitan's ring attention): each rank holds s/c of every
//     sequence's tokens (two chunks, so that causal work balances), so its GEMMs, activations, transfers and
//     tensor-parallel collectives are those of a microbatch of b/c sequences, and its attention core does 1/c
//     of the (causal) score work: every per-rank cost is the model's at b/c. The ring passes each rank's keys
//     and values (2 x s/c x b x kv heads/t x head size) c - 1 times per layer in the forward, and keys,
//     values and their gradients (twice the bytes) in the input gradient, each step overlapped with one
//     block of attention: per layer (c - 1) x max(0, step's transfer - core attention time / c) is exposed
//     (context_parallel_layer_seconds). The c ranks hold the same weights: gradients are reduced, and ZeRO
//     shards, over the d x c ranks (Megatron's data-parallel-with-context group, torchtitan's dp_shard_cp).
//     Flash attention only (eager attention has no ring implementation in either framework).
//   expert parallelism (e ranks, a mixture of experts only; Megatron's MoE parallel folding): each MoE
//     layer's routed experts are split over e ranks, E/e on each, and each expert's width over u expert-
//     tensor-parallel ranks (parallel.expert_tensor; default t, Megatron's default), the t x c x d ranks of a
//     pipeline stage regrouped as u (innermost) x e x the d' = t c d / (e u) expert-data-parallel replicas
//     (Megatron's tp-ep-dp-pp order for expert layers). Every MoE layer dispatches each token's k copies to
//     the ranks holding its experts and combines them back (two all-to-alls in the forward, two in the input
//     gradient), each tensor rank its 1/t of the tokens as Megatron's sequence-parallel MoE does; an
//     expert-tensor group of u gathers its ranks' copies (u > 1: an all-gather and a reduce-scatter of them
//     around the experts, one all-reduce's time). The experts' gradients reduce, and ZeRO shards them, over
//     the d' replicas; everything else over the d x c ranks as before.
struct ParallelConfig {
  int tensor = 1;
  int context = 1;
  int data = 1;
  int expert = 1;         // expert parallelism (see above)
  int expert_tensor = 0;  // expert tensor parallelism; 0: tensor
  // How a MoE layer's tokens reach their experts: an all-to-all of every routed copy (Megatron's alltoall
  // dispatcher), or DeepEP's kernels (Megatron's flex dispatcher with --moe-enable-deepep), which send a
  // token once to each other node holding one of its experts and forward it there over NVLink.
  bool deepep_dispatch = false;
  int zero = 0;  // 0 to 3
  bool sequence_parallel = false;
  int gpus_per_node = 8;
  bool pipeline_before_data = false;  // rank order tp-cp-pp-dp instead of Megatron's tp-cp-dp-pp
  // ZeRO-3 gathers each unit's weights while the unit before it computes, as FSDP and DeepSpeed prefetch:
  // only the first unit's gather and what the gathers take beyond the compute are exposed. false: every
  // gather blocks the compute stream.
  bool overlap_weight_gather = true;
  // The gradient reduction before the step's barrier, overlapped with other stages' work (see above).
  bool overlap_grad_reduce = true;
  // Megatron's --tp-comm-overlap (Transformer Engine's userbuffers), torchtitan's AsyncTP: an op's tensor-
  // parallel collectives run in t chunks beside its weight GEMMs, so an op shows max(C / t, C - G) of its
  // collectives' C for its GEMMs' G (the first all-gather or the last reduce-scatter chunk waits alone); the
  // attention core overlaps nothing, and the SMs the collectives take from the GEMMs are not modelled.
  // Off by default: the collectives block the compute stream.
  bool overlap_tensor_comm = false;
  // The dtype gradients are reduced in over the data-parallel ranks; empty: the model's. FSDP's mixed
  // precision (torchtitan's mixed_precision_reduce, Composer's DEFAULT) reduces in fp32: twice bf16's bytes.
  // ZeRO's weight all-gathers stay in the model's dtype.
  std::string gradient_reduce_dtype;
  bool any() const { return tensor > 1 || context > 1 || data > 1; }
  // GPUs per pipeline rank of one replica, and the ranks that hold the same weights (gradient reduction,
  // ZeRO's shards).
  int gpus_per_pipeline_rank() const { return tensor * context; }
  int weight_replicas() const { return data * context; }
  int expert_tensor_size() const { return expert_tensor > 0 ? expert_tensor : tensor; }
  // The experts' replicas (expert data parallelism).
  int expert_weight_replicas() const { return tensor * context * data / (expert * expert_tensor_size()); }
};

// Everything the transformer cost model needs besides the pipeline shape.
struct TransformerSetup {
  TransformerModel model;
  HardwareProfile profile;
  LayerSplit split = LayerSplit::kEven;
  OptimizerSpec optimizer;
  ParallelConfig parallel;
  std::vector<int> stage_layers;  // split == kExplicit: layers per (virtual) stage, in model order
  // split == kBalanced: each stage's first unit, pinned (microbatches of two sizes share the split found for
  // the larger); empty: the min-max partition at the microbatch size priced.
  std::vector<int> balanced_unit_starts;
};

int dtype_bytes(const std::string& dtype);  // throws InputError for an unknown dtype
std::string layer_split_name(LayerSplit split);
// The split as a scenario writes it: its name, or the explicit list "[3,4,4,3]".
std::string layer_split_text(const TransformerSetup& setup);
const NameTable<AttentionKind>& attention_names();  // flash, eager
const NameTable<MlpKind>& mlp_names();              // gelu, swiglu
const NameTable<NormKind>& norm_names();            // layernorm, rmsnorm
const NameTable<Recompute>& recompute_names();      // none, selective, full, op
const NameTable<LayerSplit>& layer_split_names();   // even, zb, balanced, explicit (a list in scenarios)
std::string attention_name(AttentionKind kind);
std::string recompute_name(Recompute kind);

}  // namespace pipesim
