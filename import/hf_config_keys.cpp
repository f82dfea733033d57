#include "import/hf_config.h"

namespace pipesim {
namespace {

// Read into the model: section. Llama's names first, GPT-2's second, then other families'.
void hf_keys_append_model(std::vector<ImportKey>& keys) {
  const std::initializer_list<ImportKey> group = {
      {"model_type", KeyUse::kModel,
       "the family: a gated MLP for the Llama, Mistral, Qwen, Gemma, DeepSeek families"},
      {"architectures", KeyUse::kModel, "the model class, in the comments"},
      {"text_config", KeyUse::kModel, "the language model of a multimodal config"},
      {"num_hidden_layers", KeyUse::kModel, "layers"},
      {"n_layer", KeyUse::kModel, "layers"},
      {"num_layers", KeyUse::kModel, "layers"},
      {"hidden_size", KeyUse::kModel, "hidden"},
      {"n_embd", KeyUse::kModel, "hidden"},
      {"d_model", KeyUse::kModel, "hidden"},
      {"num_attention_heads", KeyUse::kModel, "heads"},
      {"n_head", KeyUse::kModel, "heads"},
      {"vocab_size", KeyUse::kModel, "vocab"},
      {"head_dim", KeyUse::kModel, "head_dim (where heads x head_dim is not hidden)"},
      {"num_key_value_heads", KeyUse::kModel, "kv_heads"},
      {"num_kv_heads", KeyUse::kModel, "kv_heads"},
      {"hidden_act", KeyUse::kModel, "mlp: swiglu for silu, swish, swiglu; else gelu"},
      {"activation_function", KeyUse::kModel, "mlp: swiglu for silu, swish, swiglu; else gelu"},
      {"hidden_activation", KeyUse::kModel, "mlp: swiglu for silu, swish, swiglu; else gelu"},
      {"intermediate_size", KeyUse::kModel, "ffn_hidden"},
      {"n_inner", KeyUse::kModel, "ffn_hidden"},
      {"ffn_dim", KeyUse::kModel, "ffn_hidden"},
      {"max_position_embeddings", KeyUse::kModel, "seq_len without --seq-len (at most 4096)"},
      {"n_positions", KeyUse::kModel, "seq_len without --seq-len (at most 4096)"},
      {"seq_length", KeyUse::kModel, "seq_len without --seq-len (at most 4096)"},
      {"tie_word_embeddings", KeyUse::kModel, "tied_embeddings"},
      {"rms_norm_eps", KeyUse::kModel, "norm: rmsnorm"},
      {"layer_norm_eps", KeyUse::kModel, "norm: layernorm (also the default)"},
      {"layer_norm_epsilon", KeyUse::kModel, "norm: layernorm (also the default)"},
      {"torch_dtype", KeyUse::kModel, "dtype"},
      {"dtype", KeyUse::kModel, "dtype"},
      {"*dropout*", KeyUse::kModel, "dropout (any above 0)"},
      {"*pdrop*", KeyUse::kModel, "dropout (any above 0)"},
  };
  keys.insert(keys.end(), group);
}

// Features the costs do not model yet, read into model keys `run` refuses (model.moe, model.mla, ...).
void hf_keys_append_unmodelled(std::vector<ImportKey>& keys) {
  const std::initializer_list<ImportKey> group = {
      {"num_local_experts", KeyUse::kModel, "model.moe.experts"},
      {"num_experts", KeyUse::kModel, "model.moe.experts"},
      {"n_routed_experts", KeyUse::kModel, "model.moe.experts"},
      {"num_experts_per_tok", KeyUse::kModel, "model.moe.experts_per_token"},
      {"num_selected_experts", KeyUse::kModel, "model.moe.experts_per_token"},
      {"moe_intermediate_size", KeyUse::kModel, "model.moe.expert_ffn_hidden"},
      {"n_shared_experts", KeyUse::kModel, "model.moe.shared_experts"},
      {"shared_expert_intermediate_size", KeyUse::kModel, "model.moe.shared_experts"},
      {"first_k_dense_replace", KeyUse::kModel, "model.moe.dense_layers"},
      {"kv_lora_rank", KeyUse::kModel, "model.mla.kv_lora_rank"},
      {"q_lora_rank", KeyUse::kModel, "model.mla.q_lora_rank"},
      {"qk_nope_head_dim", KeyUse::kModel, "model.mla.qk_nope_head_dim"},
      {"qk_rope_head_dim", KeyUse::kModel, "model.mla.qk_rope_head_dim"},
      {"v_head_dim", KeyUse::kModel, "model.mla.v_head_dim"},
      {"sliding_window", KeyUse::kUnmodelled,
       "model.sliding_window (where shorter than seq_len and use_sliding_window is not false)"},
      {"sliding_window_size", KeyUse::kUnmodelled,
       "model.sliding_window (where shorter than seq_len and use_sliding_window is not false)"},
      {"use_sliding_window", KeyUse::kUnmodelled,
       "model.sliding_window (where shorter than seq_len and use_sliding_window is not false)"},
      {"attention_chunk_size", KeyUse::kUnmodelled, "model.attention_chunk"},
      {"num_nextn_predict_layers", KeyUse::kModel, "model.mtp_layers"},
  };
  keys.insert(keys.end(), group);
}

// The other towers of a multimodal model (not supported where present) and the checkpoint's quantization
// (noted in the comments).
void hf_keys_append_towers_and_quantization(std::vector<ImportKey>& keys) {
  keys.insert(
      keys.end(),
      {
          {"vision_config", KeyUse::kUnsupported, "a vision tower: pipesim models the language model only"},
          {"audio_config", KeyUse::kUnsupported, "an audio tower: pipesim models the language model only"},
          {"quantization_config", KeyUse::kIgnored,
           "how the checkpoint stores its weights, not how training multiplies (noted in the comments)"},
      });
}

// Ignored: what tunes a feature without changing its cost (its router, the layers that have it).
void hf_keys_append_feature_tuning(std::vector<ImportKey>& keys) {
  const char* const kTunes = "tunes a feature read into model.moe or model.sliding_window";
  const std::initializer_list<ImportKey> group = {
      {"norm_topk_prob", KeyUse::kIgnored, kTunes},
      {"router_aux_loss_coef", KeyUse::kIgnored, kTunes},
      {"output_router_logits", KeyUse::kIgnored, kTunes},
      {"router_jitter_noise", KeyUse::kIgnored, kTunes},
      {"topk_method", KeyUse::kIgnored, kTunes},
      {"n_group", KeyUse::kIgnored, kTunes},
      {"topk_group", KeyUse::kIgnored, kTunes},
      {"routed_scaling_factor", KeyUse::kIgnored, kTunes},
      {"scoring_func", KeyUse::kIgnored, kTunes},
      {"aux_loss_alpha", KeyUse::kIgnored, kTunes},
      {"seq_aux", KeyUse::kIgnored, kTunes},
      {"ep_size", KeyUse::kIgnored, kTunes},
      {"moe_layer_freq", KeyUse::kModel,
       "1 (every layer after the dense ones a MoE); other values not supported"},
      {"decoder_sparse_step", KeyUse::kModel, "model.moe.layer_step"},
      {"interleave_moe_layer_step", KeyUse::kModel, "model.moe.layer_step"},
      {"mlp_only_layers", KeyUse::kModel, "[] (no dense layer among the MoE ones); others not supported"},
      {"sliding_window_pattern", KeyUse::kIgnored, kTunes},
      {"max_window_layers", KeyUse::kIgnored, kTunes},
  };
  keys.insert(keys.end(), group);
}

// Ignored: names, token ids, numerics of norms and positions, flags of the Python implementation.
void hf_keys_append_ignored(std::vector<ImportKey>& keys) {
  const std::initializer_list<ImportKey> group = {
      {"_name_or_path", KeyUse::kIgnored, ""},
      {"transformers_version", KeyUse::kIgnored, ""},
      {"bos_token_id", KeyUse::kIgnored, ""},
      {"eos_token_id", KeyUse::kIgnored, ""},
      {"pad_token_id", KeyUse::kIgnored, ""},
      {"sep_token_id", KeyUse::kIgnored, ""},
      {"decoder_start_token_id", KeyUse::kIgnored, ""},
      {"initializer_range", KeyUse::kIgnored, ""},
      {"rope_theta", KeyUse::kIgnored, ""},
      {"rope_scaling", KeyUse::kIgnored, ""},
      {"rope_type", KeyUse::kIgnored, ""},
      {"rotary_emb_base", KeyUse::kIgnored, ""},
      {"use_cache", KeyUse::kIgnored, ""},
      {"pretraining_tp", KeyUse::kIgnored, ""},
      {"attention_bias", KeyUse::kIgnored, ""},
      {"mlp_bias", KeyUse::kIgnored, ""},
      {"bias", KeyUse::kIgnored, ""},
      {"n_ctx", KeyUse::kIgnored, ""},
      {"scale_attn_weights", KeyUse::kIgnored, ""},
      {"scale_attn_by_inverse_layer_idx", KeyUse::kIgnored, ""},
      {"reorder_and_upcast_attn", KeyUse::kIgnored, ""},
      {"summary_type", KeyUse::kIgnored, ""},
      {"summary_use_proj", KeyUse::kIgnored, ""},
      {"summary_activation", KeyUse::kIgnored, ""},
      {"summary_proj_to_labels", KeyUse::kIgnored, ""},
      {"summary_first_dropout", KeyUse::kIgnored, ""},
      {"task_specific_params", KeyUse::kIgnored, ""},
      {"id2label", KeyUse::kIgnored, ""},
      {"label2id", KeyUse::kIgnored, ""},
      {"problem_type", KeyUse::kIgnored, ""},
      {"return_dict", KeyUse::kIgnored, ""},
      {"output_attentions", KeyUse::kIgnored, ""},
      {"output_hidden_states", KeyUse::kIgnored, ""},
      {"torchscript", KeyUse::kIgnored, ""},
      {"use_return_dict", KeyUse::kIgnored, ""},
      {"is_encoder_decoder", KeyUse::kIgnored, ""},
      {"tokenizer_class", KeyUse::kIgnored, ""},
      {"auto_map", KeyUse::kIgnored, ""},
      {"attn_implementation", KeyUse::kIgnored, ""},
      {"_attn_implementation", KeyUse::kIgnored, ""},
      {"qk_layernorm", KeyUse::kIgnored, ""},
      {"final_logit_softcapping", KeyUse::kIgnored, ""},
      {"attn_logit_softcapping", KeyUse::kIgnored, ""},
      {"query_pre_attn_scalar", KeyUse::kIgnored, ""},
      {"embedding_multiplier", KeyUse::kIgnored, ""},
      {"logits_scaling", KeyUse::kIgnored, ""},
      {"residual_multiplier", KeyUse::kIgnored, ""},
      {"attention_multiplier", KeyUse::kIgnored, ""},
      {"clip_qkv", KeyUse::kIgnored, ""},
  };
  keys.insert(keys.end(), group);
}

}  // namespace

// The groups in the order `--keys` and docs/import-keys.md list them.
const ImportKeyTable& hf_config_keys() {
  static const ImportKeyTable table = [] {
    std::vector<ImportKey> keys;
    hf_keys_append_model(keys);
    hf_keys_append_unmodelled(keys);
    hf_keys_append_towers_and_quantization(keys);
    hf_keys_append_feature_tuning(keys);
    hf_keys_append_ignored(keys);
    return ImportKeyTable("Hugging Face config.json", "", std::move(keys));
  }();
  return table;
}

}  // namespace pipesim
