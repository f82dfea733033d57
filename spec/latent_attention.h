#pragma once
// Multi-head latent attention (DeepSeek-V2/V3, Kimi K2): keys and values are rebuilt per head from one
// compressed latent per token, queries from another (or from the hidden state when q_lora_rank is 0), and
// a rotary part of each query and key is kept apart, its key half shared by every head. Training runs it in
// its naive form (Megatron's MLASelfAttention, torchtitan's DeepSeek-V3): the up projections expand the
// latents to a full head per query head and flash attention runs over them; the absorbed form is an
// inference optimisation. What it costs is cost_models/transformer/latent_attention.h.
namespace pipesim {

struct LatentAttention {
  int kv_lora_rank = 0;  // the key/value latent's width; 0: not latent attention
  int q_lora_rank = 0;   // the query latent's width; 0: queries projected from the hidden state
  // Each head's query/key width without rotary embedding, the rotary part's, and each value head's
  // (DeepSeek's qk_nope_head_dim, qk_rope_head_dim, v_head_dim; Megatron's defaults).
  int qk_nope_head_dim = 128;
  int qk_rope_head_dim = 64;
  int v_head_dim = 128;
  bool any() const { return kv_lora_rank > 0; }
  double query_head_width() const { return static_cast<double>(qk_nope_head_dim) + qk_rope_head_dim; }
};

}  // namespace pipesim
