#include "io/hf_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <nlohmann/json.hpp>
#include <set>

#include "base/errors.h"

namespace pipesim {
namespace {

using nlohmann::json;

// Keys that change no figure pipesim computes: names, token ids, numerics of norms and positions, flags of
// the Python implementation.
const std::set<std::string>& ignored_keys() {
  static const std::set<std::string> keys{"_name_or_path",
                                          "transformers_version",
                                          "bos_token_id",
                                          "eos_token_id",
                                          "pad_token_id",
                                          "sep_token_id",
                                          "decoder_start_token_id",
                                          "initializer_range",
                                          "rms_norm_eps",
                                          "layer_norm_eps",
                                          "layer_norm_epsilon",
                                          "rope_theta",
                                          "rope_scaling",
                                          "rope_type",
                                          "rotary_emb_base",
                                          "use_cache",
                                          "pretraining_tp",
                                          "attention_bias",
                                          "mlp_bias",
                                          "bias",
                                          "n_ctx",
                                          "scale_attn_weights",
                                          "scale_attn_by_inverse_layer_idx",
                                          "reorder_and_upcast_attn",
                                          "summary_type",
                                          "summary_use_proj",
                                          "summary_activation",
                                          "summary_proj_to_labels",
                                          "summary_first_dropout",
                                          "task_specific_params",
                                          "id2label",
                                          "label2id",
                                          "problem_type",
                                          "return_dict",
                                          "output_attentions",
                                          "output_hidden_states",
                                          "torchscript",
                                          "use_return_dict",
                                          "is_encoder_decoder",
                                          "tokenizer_class",
                                          "auto_map",
                                          "attn_implementation",
                                          "_attn_implementation",
                                          "max_window_layers",
                                          "qk_layernorm",
                                          "final_logit_softcapping",
                                          "attn_logit_softcapping",
                                          "query_pre_attn_scalar",
                                          "embedding_multiplier",
                                          "logits_scaling",
                                          "residual_multiplier",
                                          "attention_multiplier",
                                          "clip_qkv"};
  return keys;
}

// Keys whose value, when it does something, the transformer model cannot represent.
struct Unsupported {
  const char* key;
  const char* why;
};
const std::vector<Unsupported>& unsupported_keys() {
  static const std::vector<Unsupported> keys{
      {"num_local_experts", "a mixture of experts: pipesim models one dense MLP per layer"},
      {"num_experts", "a mixture of experts: pipesim models one dense MLP per layer"},
      {"n_routed_experts", "a mixture of experts: pipesim models one dense MLP per layer"},
      {"num_experts_per_tok", "a mixture of experts: pipesim models one dense MLP per layer"},
      {"moe_intermediate_size", "a mixture of experts: pipesim models one dense MLP per layer"},
      {"sliding_window", "sliding-window attention: pipesim's attention spans the whole sequence"},
      {"use_sliding_window", "sliding-window attention: pipesim's attention spans the whole sequence"},
      {"kv_lora_rank", "multi-head latent attention: pipesim models (grouped) multi-head attention"},
      {"q_lora_rank", "multi-head latent attention: pipesim models (grouped) multi-head attention"},
      {"attention_chunk_size", "chunked attention: pipesim's attention spans the whole sequence"},
      {"vision_config", "a vision tower: pipesim models the language model only"},
      {"audio_config", "an audio tower: pipesim models the language model only"}};
  return keys;
}

// Model types whose MLP is gated (three matrices), whatever the activation's name.
bool gated_model_type(const std::string& type) {
  static const std::set<std::string> gated{
      "llama",  "mistral",  "mixtral",  "qwen2",  "qwen2_moe",   "qwen3",       "qwen3_moe",  "gemma",
      "gemma2", "gemma3",   "olmo",     "olmo2",  "phi3",        "cohere",      "granite",    "internlm2",
      "yi",     "deepseek", "baichuan", "exaone", "gemma3_text", "deepseek_v2", "deepseek_v3"};
  return gated.count(type) > 0;
}

// An active value: not null, not false, not 0, not an empty list or object.
bool active(const json& value) {
  if (value.is_null()) return false;
  if (value.is_boolean()) return value.get<bool>();
  if (value.is_number()) return value.get<double>() != 0;
  if (value.is_array() || value.is_object()) return !value.empty();
  return true;
}

std::string short_text(const json& value) {
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

// (line, column) of a byte offset, both 1-based.
std::pair<int, int> line_and_column(const std::string& text, std::size_t byte) {
  int line = 1, column = 1;
  for (std::size_t i = 0; i < std::min(byte, text.size()); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

class ConfigReader {
 public:
  ConfigReader(const json& config, const std::string& source, ModelImport& out)
      : config_(config), source_(source), out_(out) {}

  // The first of `keys` present with a non-null value, or nullptr.
  const json* find(std::initializer_list<const char*> keys, std::string& found) {
    for (const char* key : keys) {
      const auto it = config_.find(key);
      if (it != config_.end()) used_.insert(key);
      if (it != config_.end() && !it->is_null()) {
        found = key;
        return &*it;
      }
    }
    return nullptr;
  }

  // A positive integer under the first of `keys` present, noted as read into `field`.
  std::optional<int> positive_int(std::initializer_list<const char*> keys, const char* field, bool required) {
    std::string key;
    const json* value = find(keys, key);
    if (!value) {
      if (required) {
        std::vector<std::string> names(keys.begin(), keys.end());
        throw InputError(
            fmt::format("{}: no '{}' (the model's {}): a Hugging Face config.json of a decoder "
                        "language model names it",
                        source_, fmt::join(names, "' or '"), field));
      }
      return std::nullopt;
    }
    if (!value->is_number_integer() || value->get<long long>() < 1 || value->get<long long>() > INT_MAX) {
      throw InputError(fmt::format("{}: key '{}': expected a positive integer (the model's {}), got {}",
                                   source_, key, field, short_text(*value)));
    }
    const int v = static_cast<int>(value->get<long long>());
    out_.read.push_back(fmt::format("{}: {} -> {}", key, v, field));
    return v;
  }

  std::optional<std::string> string_value(std::initializer_list<const char*> keys) {
    std::string key;
    const json* value = find(keys, key);
    if (!value) return std::nullopt;
    if (!value->is_string())
      throw InputError(
          fmt::format("{}: key '{}': expected a string, got {}", source_, key, short_text(*value)));
    return value->get<std::string>();
  }

  void mark_used(const std::string& key) { used_.insert(key); }
  bool used(const std::string& key) const { return used_.count(key) > 0; }

 private:
  const json& config_;
  const std::string& source_;
  ModelImport& out_;
  std::set<std::string> used_;
};

std::string dtype_of(const std::string& torch_dtype) {
  if (torch_dtype == "bfloat16") return "bf16";
  if (torch_dtype == "float16") return "fp16";
  if (torch_dtype == "float32") return "fp32";
  return "";
}

}  // namespace

ModelImport read_hf_config(const std::string& json_text, const std::string& source,
                           std::optional<int> seq_len) {
  json root;
  try {
    root = json::parse(json_text);
  } catch (const json::parse_error& e) {
    const auto [line, column] = line_and_column(json_text, e.byte > 0 ? e.byte - 1 : 0);
    std::string what = e.what();
    if (const auto at = what.find("syntax error"); at != std::string::npos) what = what.substr(at);
    throw InputError(fmt::format("{}:{}:{}: not JSON: {}", source, line, column, what));
  }
  if (!root.is_object())
    throw InputError(
        fmt::format("{}: expected a JSON object (a config.json), got {}", source, short_text(root)));
  ModelImport out;
  // Multimodal configs keep the language model in text_config.
  const json* config = &root;
  if (!root.contains("num_hidden_layers") && !root.contains("n_layer") && root.contains("text_config") &&
      root["text_config"].is_object()) {
    config = &root["text_config"];
    out.assumed.push_back("the language model read from text_config (the rest describes other towers)");
  }
  ConfigReader r(*config, source, out);
  TransformerModel& m = out.model;
  out.model_type = r.string_value({"model_type"}).value_or("");
  if (const auto it = config->find("architectures"); it != config->end()) {
    r.mark_used("architectures");
    if (it->is_array() && !it->empty() && (*it)[0].is_string())
      out.architecture = (*it)[0].get<std::string>();
  }
  m.layers = *r.positive_int({"num_hidden_layers", "n_layer", "num_layers"}, "layers", true);
  m.hidden = *r.positive_int({"hidden_size", "n_embd", "d_model"}, "hidden", true);
  m.heads = *r.positive_int({"num_attention_heads", "n_head"}, "heads", true);
  m.vocab = *r.positive_int({"vocab_size"}, "vocab", true);
  if (m.hidden % m.heads != 0) {
    throw InputError(
        fmt::format("{}: {} heads do not divide the hidden size {}: pipesim's attention has "
                    "heads of hidden / heads each",
                    source, m.heads, m.hidden));
  }
  if (const auto kv = r.positive_int({"num_key_value_heads", "num_kv_heads"}, "kv_heads", false)) {
    if (m.heads % *kv != 0) {
      throw InputError(
          fmt::format("{}: {} key/value heads do not divide the {} query heads", source, *kv, m.heads));
    }
    m.kv_heads = *kv == m.heads ? 0 : *kv;
  }
  // The MLP: gated for a gated family or activation.
  const std::string activation =
      r.string_value({"hidden_act", "activation_function", "hidden_activation"}).value_or("");
  const bool gated_activation = activation == "silu" || activation == "swish" || activation == "swiglu";
  if (gated_model_type(out.model_type) || gated_activation) {
    m.mlp = MlpKind::kSwiglu;
    out.read.push_back(fmt::format("{}{}{} -> mlp: swiglu (a gated MLP, three matrices)",
                                   out.model_type.empty() ? "" : "model_type " + out.model_type,
                                   !out.model_type.empty() && !activation.empty() ? ", " : "",
                                   activation.empty() ? "" : "activation " + activation));
  } else {
    m.mlp = MlpKind::kGelu;
    out.read.push_back(fmt::format("activation {} -> mlp: gelu (two matrices)",
                                   activation.empty() ? "(none named)" : activation));
  }
  if (const auto f = r.positive_int({"intermediate_size", "n_inner", "ffn_dim"}, "ffn_hidden", false)) {
    m.ffn_hidden = *f;
  } else {
    out.assumed.push_back(m.mlp == MlpKind::kGelu
                              ? "no intermediate_size: the MLP is 4 x hidden wide (GPT-2's n_inner: null)"
                              : "no intermediate_size: the MLP is 8/3 x hidden wide, rounded up to 256");
  }
  if (seq_len) {
    m.seq_len = *seq_len;
    r.positive_int({"max_position_embeddings", "n_positions"},
                   "the longest context (not used: --seq-len "
                   "gives the training run's)",
                   false);
    out.read.push_back(fmt::format("--seq-len {} -> seq_len", *seq_len));
  } else if (const auto s =
                 r.positive_int({"max_position_embeddings", "n_positions", "seq_length"}, "seq_len", false)) {
    m.seq_len = *s;
    out.assumed.push_back(
        fmt::format("seq_len {} is the model's longest context; a training run is often "
                    "shorter (pipesim import hf --seq-len S)",
                    *s));
  } else {
    throw InputError(
        fmt::format("{}: no max_position_embeddings or n_positions: give the sequence length "
                    "with --seq-len",
                    source));
  }
  std::string key;
  if (const json* tied = r.find({"tie_word_embeddings"}, key)) {
    if (!tied->is_boolean())
      throw InputError(fmt::format("{}: key 'tie_word_embeddings': expected true or false, got {}", source,
                                   short_text(*tied)));
    m.tied_embeddings = tied->get<bool>();
    out.read.push_back(fmt::format("tie_word_embeddings: {} -> tied_embeddings", m.tied_embeddings));
  } else {
    m.tied_embeddings = true;
    out.assumed.push_back("no tie_word_embeddings: tied, Hugging Face's default");
  }
  if (const auto dtype = r.string_value({"torch_dtype", "dtype"})) {
    const std::string ours = dtype_of(*dtype);
    if (ours.empty()) {
      out.unsupported.push_back(
          fmt::format("torch_dtype: {} (pipesim models bf16, fp16 and fp32; bf16 used)", *dtype));
    } else {
      m.dtype = ours;
      out.read.push_back(fmt::format("torch_dtype: {} -> dtype: {}", *dtype, ours));
    }
  } else {
    out.assumed.push_back("no torch_dtype: bf16");
  }
  // Dropout anywhere means dropout in pipesim's layer (it stores its masks).
  for (const auto& [name, value] : config->items()) {
    const bool dropout_key =
        name.find("dropout") != std::string::npos || name.find("pdrop") != std::string::npos;
    if (!dropout_key) continue;
    r.mark_used(name);
    const bool drops = value.is_number() && value.get<double>() > 0;
    m.dropout = m.dropout || drops;
    out.read.push_back(
        fmt::format("{}: {} -> {}", name, short_text(value), drops ? "dropout: true" : "no dropout"));
  }
  for (const auto& [name, value] : config->items()) {
    if (r.used(name)) continue;
    const auto unsupported = std::find_if(unsupported_keys().begin(), unsupported_keys().end(),
                                          [&name = name](const Unsupported& u) { return name == u.key; });
    if (name == "head_dim") {
      if (value.is_number_integer() && value.get<long long>() == m.hidden / m.heads) {
        out.ignored.push_back(name);
      } else {
        out.unsupported.push_back(fmt::format("head_dim: {} (pipesim's heads are hidden / heads = {} wide)",
                                              short_text(value), m.hidden / m.heads));
      }
    } else if (unsupported != unsupported_keys().end()) {
      if (active(value)) {
        out.unsupported.push_back(fmt::format("{}: {} ({})", name, short_text(value), unsupported->why));
      } else {
        out.ignored.push_back(name);
      }
    } else if (ignored_keys().count(name) > 0) {
      out.ignored.push_back(name);
    } else if (config == &root || name != "text_config") {
      out.unknown.push_back(name);
    }
  }
  return out;
}

}  // namespace pipesim
