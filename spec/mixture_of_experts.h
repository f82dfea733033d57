#pragma once
// A mixture-of-experts MLP (Mixtral, Qwen-MoE, DeepSeek): each MoE layer's MLP is a router over `experts`
// routed experts, of which each token passes through `experts_per_token` (top-k), plus `shared_experts` every
// token passes through; the first `dense_layers` layers keep the model's dense MLP. What it costs is
// cost_models/transformer/moe_layer.h.
namespace pipesim {

struct MixtureOfExperts {
  int experts = 0;            // routed experts per MoE layer; 0: a dense model
  int experts_per_token = 0;  // top-k
  int shared_experts = 0;     // experts every token passes through, each of the routed experts' width
  int expert_ffn_hidden = 0;  // one expert's MLP width; 0: the model's ffn_hidden
  int dense_layers = 0;       // the first layers keep a dense MLP (DeepSeek's first_k_dense_replace)
  // After those, every layer_step-th layer is a MoE and the others dense: layer l (0-based) is a MoE when
  // (l - dense_layers + 1) is a multiple of it (Qwen2-MoE's decoder_sparse_step, Llama 4's
  // interleave_moe_layer_step: 2 puts experts on layers 1, 3, 5, ...).
  int layer_step = 1;
  // The most loaded expert-parallel rank's routed tokens over the mean (1: perfectly balanced). It scales
  // that rank's expert GEMMs, its dispatched activations and its all-to-alls: the slowest rank sets the
  // pace of the synchronous MoE layer.
  double load_imbalance = 1;
  // Tokens an expert takes at most, over the mean (Megatron's --moe-expert-capacity-factor, GShard's C):
  // tokens beyond it are dropped, so the most loaded rank's load is min(load_imbalance, capacity_factor);
  // 0: dropless (every token routed).
  double capacity_factor = 0;
  bool any() const { return experts > 0; }
  bool moe_layer(int layer) const {
    return any() && layer >= dense_layers && (layer - dense_layers + 1) % layer_step == 0;
  }
  // The most loaded rank's routed tokens over the mean, under the capacity.
  double routed_load() const;
};

}  // namespace pipesim
