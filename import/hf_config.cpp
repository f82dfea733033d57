#include "import/hf_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <nlohmann/json.hpp>
#include <set>

#include "base/errors.h"

namespace pipesim {
namespace {

using nlohmann::json;

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
      mark_consulted(key);
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

  void mark_used(const std::string& key) {
    mark_consulted(key);
    used_.insert(key);
  }
  // Every lookup goes through the key table (hf_config_keys): one it lacks is a pipesim bug.
  void mark_consulted(const std::string& key) {
    hf_config_keys().consulted(key);
    if (std::find(out_.consulted.begin(), out_.consulted.end(), key) == out_.consulted.end())
      out_.consulted.push_back(key);
  }
  bool used(const std::string& key) const { return used_.count(key) > 0; }

 private:
  const json& config_;
  const std::string& source_;
  ModelImport& out_;
  std::set<std::string> used_;
};

// A mixture of experts into model.moe, latent attention into model.mla; the features the costs do not
// represent yet into model.sliding_window, ...
// (spec/unmodelled_features.h): the scenario carries them, so that `run` refuses it instead of pricing a
// dense stand-in. A sliding window is kept only where the file says it is used.
void read_unmodelled_features(const json& config, ConfigReader& r, ModelImport& out) {
  TransformerModel& m = out.model;
  UnmodelledFeatures& f = m.unmodelled;
  const auto number = [&](std::initializer_list<const char*> keys) -> int {
    const auto v = r.positive_int(keys, "feature's size", false);
    if (v) out.read.pop_back();  // said below, with what it means
    return v.value_or(0);
  };
  if (const int experts = number({"num_local_experts", "num_experts", "n_routed_experts"}); experts > 0) {
    m.moe.experts = experts;
    m.moe.experts_per_token = number({"num_experts_per_tok", "num_selected_experts"});
    if (m.moe.experts_per_token == 0) {
      m.moe.experts_per_token = std::min(2, experts);
      out.assumed.push_back(
          fmt::format("no num_experts_per_tok: {} experts per token", m.moe.experts_per_token));
    }
    m.moe.expert_ffn_hidden = number({"moe_intermediate_size"});
    m.moe.shared_experts = number({"n_shared_experts"});
    if (const int shared_width = number({"shared_expert_intermediate_size"}); shared_width > 0) {
      // Qwen-MoE's one shared expert of this width, counted in experts of the routed width.
      const int width = m.moe.expert_ffn_hidden > 0 ? m.moe.expert_ffn_hidden : m.ffn();
      m.moe.shared_experts = std::max(1, (shared_width + width / 2) / width);
    }
    m.moe.dense_layers = number({"first_k_dense_replace"});
    m.moe.layer_step = std::max(1, number({"decoder_sparse_step", "interleave_moe_layer_step"}));
    if (const auto freq = config.find("moe_layer_freq"); freq != config.end()) {
      r.mark_used("moe_layer_freq");
      if (!(freq->is_number_integer() && freq->get<int>() == 1))
        out.unsupported.push_back(
            fmt::format("moe_layer_freq: {} (DeepSeek's every-n-th MoE layer: every layer after the dense "
                        "ones priced as a MoE)",
                        short_text(*freq)));
    }
    if (const auto dense = config.find("mlp_only_layers"); dense != config.end()) {
      r.mark_used("mlp_only_layers");
      if (dense->is_array() && !dense->empty())
        out.unsupported.push_back(fmt::format(
            "mlp_only_layers: {} (dense layers at these indices: priced as MoE layers)", short_text(*dense)));
    }
    out.read.push_back(
        fmt::format("experts: {} routed, {} per token{}{}{}{} -> model.moe", experts, m.moe.experts_per_token,
                    m.moe.shared_experts > 0 ? fmt::format(", {} shared", m.moe.shared_experts) : "",
                    m.moe.expert_ffn_hidden > 0 ? fmt::format(", width {}", m.moe.expert_ffn_hidden) : "",
                    m.moe.dense_layers > 0 ? fmt::format(", first {} dense", m.moe.dense_layers) : "",
                    m.moe.layer_step > 1 ? fmt::format(", every {} layers", m.moe.layer_step) : ""));
  }
  if (const int rank = number({"kv_lora_rank"}); rank > 0) {
    LatentAttention& mla = m.mla;
    mla.kv_lora_rank = rank;
    mla.q_lora_rank = number({"q_lora_rank"});
    // Absent head widths keep Megatron's defaults (DeepSeek-V2/V3's 128, 64, 128), said below.
    const auto width = [&](const char* key, int& value) {
      if (const int given = number({key}); given > 0) {
        value = given;
      } else {
        out.assumed.push_back(fmt::format("no {}: {} (DeepSeek-V3's)", key, value));
      }
    };
    width("qk_nope_head_dim", mla.qk_nope_head_dim);
    width("qk_rope_head_dim", mla.qk_rope_head_dim);
    width("v_head_dim", mla.v_head_dim);
    out.read.push_back(
        fmt::format("kv_lora_rank {}, q_lora_rank {}, head widths {} + {} (rotary), values {} -> model.mla",
                    rank, mla.q_lora_rank, mla.qk_nope_head_dim, mla.qk_rope_head_dim, mla.v_head_dim));
  } else {
    for (const char* key : {"q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"})
      r.mark_used(key);
  }
  std::string key;
  const json* use = r.find({"use_sliding_window"}, key);
  const bool window_off = use && use->is_boolean() && !use->get<bool>();
  if (const int window = number({"sliding_window", "sliding_window_size"}); window > 0) {
    if (window_off) {
      out.ignored.push_back(fmt::format("sliding_window {} (use_sliding_window: false)", window));
    } else {
      f.sliding_window = window;
      out.read.push_back(
          fmt::format("sliding_window {} -> model.sliding_window (not modelled yet where "
                      "shorter than seq_len)",
                      window));
    }
  }
  if (const int chunk = number({"attention_chunk_size"}); chunk > 0) {
    f.attention_chunk = chunk;
    out.read.push_back(fmt::format("attention_chunk_size {} -> model.attention_chunk", chunk));
  }
  if (const int mtp = number({"num_nextn_predict_layers"}); mtp > 0) {
    m.mtp_layers = mtp;
    out.read.push_back(fmt::format("num_nextn_predict_layers {} -> model.mtp_layers", mtp));
  }
  if (const auto q = config.find("quantization_config"); q != config.end()) {
    r.mark_used("quantization_config");
    out.assumed.push_back(fmt::format(
        "quantization_config {}: how the checkpoint's weights are stored, not how training multiplies; the "
        "GEMMs are priced in dtype (add model.fp8: RECIPE, e.g. blockwise as DeepSeek-V3 trained, to state "
        "FP8 "
        "training)",
        short_text(*q)));
  }
}

std::string dtype_of(const std::string& torch_dtype) {
  if (torch_dtype == "bfloat16") return "bf16";
  if (torch_dtype == "float16") return "fp16";
  if (torch_dtype == "float32") return "fp32";
  return "";
}

// The file's JSON object; errors name the line and column (a syntax error) or say why it is not a config.
json hf_parse_config(const std::string& json_text, const std::string& source) {
  json root;
  // A config.json nests a few levels; a value nested thousands deep (a crafted file) would overflow the
  // stack wherever it is printed or copied, so it is refused while parsing.
  constexpr int kMaxDepth = 256;
  const json::parser_callback_t depth_check = [&](int depth, json::parse_event_t, json&) {
    if (depth > kMaxDepth) {
      throw InputError(
          fmt::format("{}: a value nested more than {} levels deep: not a config.json", source, kMaxDepth));
    }
    return true;
  };
  try {
    root = json::parse(json_text, depth_check);
  } catch (const json::parse_error& e) {
    const auto [line, column] = line_and_column(json_text, e.byte > 0 ? e.byte - 1 : 0);
    std::string what = e.what();
    if (const auto at = what.find("syntax error"); at != std::string::npos) what = what.substr(at);
    throw InputError(fmt::format("{}:{}:{}: not JSON: {}", source, line, column, what));
  } catch (const json::out_of_range& e) {
    // A number beyond a double (1e520): nlohmann says which, not where.
    std::string what = e.what();
    if (const auto at = what.find("number overflow"); at != std::string::npos) what = what.substr(at);
    throw InputError(fmt::format("{}: not a config.json: {}", source, what));
  }
  if (!root.is_object())
    throw InputError(
        fmt::format("{}: expected a JSON object (a config.json), got {}", source, short_text(root)));
  return root;
}

// The layer counts and widths every decoder config names, and each head's width.
void hf_read_model_shape(ConfigReader& r, const std::string& source, ModelImport& out) {
  TransformerModel& m = out.model;
  m.layers = *r.positive_int({"num_hidden_layers", "n_layer", "num_layers"}, "layers", true);
  m.hidden = *r.positive_int({"hidden_size", "n_embd", "d_model"}, "hidden", true);
  m.heads = *r.positive_int({"num_attention_heads", "n_head"}, "heads", true);
  m.vocab = *r.positive_int({"vocab_size"}, "vocab", true);
  // Each head's width: hidden / heads unless head_dim says otherwise (Qwen3, Gemma: heads x head_dim != h).
  if (const auto d = r.positive_int({"head_dim"}, "head_dim", false)) {
    if (*d * static_cast<long long>(m.heads) == m.hidden) {
      out.read.back() = fmt::format("head_dim: {} (= hidden / heads)", *d);
    } else {
      m.head_dim = *d;
    }
  } else if (m.hidden % m.heads != 0) {
    throw InputError(
        fmt::format("{}: {} heads do not divide the hidden size {} and there is no head_dim: each head's "
                    "width is unknown",
                    source, m.heads, m.hidden));
  }
  if (const auto kv = r.positive_int({"num_key_value_heads", "num_kv_heads"}, "kv_heads", false)) {
    if (m.heads % *kv != 0) {
      throw InputError(
          fmt::format("{}: {} key/value heads do not divide the {} query heads", source, *kv, m.heads));
    }
    m.kv_heads = *kv == m.heads ? 0 : *kv;
  }
}

// The MLP: gated for a gated family or activation; its width where the file gives one.
void hf_read_mlp(ConfigReader& r, ModelImport& out) {
  TransformerModel& m = out.model;
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
}

// The norms: an RMSNorm epsilon names RMSNorm (Llama, Qwen, Mistral), a LayerNorm epsilon LayerNorm (GPT-2).
void hf_read_norm(ConfigReader& r, ModelImport& out) {
  std::string key;
  if (r.find({"rms_norm_eps"}, key)) {
    out.model.norm = NormKind::kRmsNorm;
    out.read.push_back("rms_norm_eps -> norm: rmsnorm");
  } else if (r.find({"layer_norm_eps", "layer_norm_epsilon"}, key)) {
    out.model.norm = NormKind::kLayerNorm;
    out.read.push_back(fmt::format("{} -> norm: layernorm", key));
  } else {
    out.assumed.push_back("no rms_norm_eps or layer_norm_eps: norm layernorm, the default");
  }
}

// The sequence length: pipesim's --seq-len, else the model's longest context, capped.
void hf_read_seq_len(ConfigReader& r, const std::string& source, std::optional<int> seq_len,
                     ModelImport& out) {
  TransformerModel& m = out.model;
  if (seq_len) {
    m.seq_len = *seq_len;
    r.positive_int({"max_position_embeddings", "n_positions"},
                   "the longest context (not used: --seq-len "
                   "gives the training run's)",
                   false);
    out.read.push_back(fmt::format("--seq-len {} -> seq_len", *seq_len));
  } else if (const auto s = r.positive_int({"max_position_embeddings", "n_positions", "seq_length"},
                                           "the longest context", false)) {
    // The longest context (131,072 tokens for Llama 3.1) is not what pretraining runs at, and fits nothing.
    m.seq_len = std::min(*s, kDefaultImportSeqLen);
    out.assumed.push_back(fmt::format(
        "no --seq-len: seq_len {} ({}; the model's longest context is {}): give the training run's with "
        "pipesim import hf --seq-len S",
        m.seq_len, m.seq_len == *s ? "the longest context" : "pipesim's default, a common pretraining length",
        *s));
  } else {
    throw InputError(
        fmt::format("{}: no max_position_embeddings or n_positions: give the sequence length "
                    "with --seq-len",
                    source));
  }
}

// Whether the output layer shares the embedding (Hugging Face's default), and the dtype.
void hf_read_embeddings_and_dtype(ConfigReader& r, const std::string& source, ModelImport& out) {
  TransformerModel& m = out.model;
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
}

// Dropout anywhere means dropout in pipesim's layer (it stores its masks).
void hf_read_dropout(const json& config, ConfigReader& r, ModelImport& out) {
  for (const auto& [name, value] : config.items()) {
    const bool dropout_key =
        name.find("dropout") != std::string::npos || name.find("pdrop") != std::string::npos;
    if (!dropout_key) continue;
    r.mark_used(name);
    const bool drops = value.is_number() && value.get<double>() > 0;
    out.model.dropout = out.model.dropout || drops;
    out.read.push_back(
        fmt::format("{}: {} -> {}", name, short_text(value), drops ? "dropout: true" : "no dropout"));
  }
}

// The keys not read, sorted by the key table: unknown, not supported where in force, or ignored.
void hf_sort_unread_keys(const json& config, const ConfigReader& r, ModelImport& out) {
  for (const auto& [name, value] : config.items()) {
    if (r.used(name)) continue;
    const ImportKey* key = hf_config_keys().find(name);
    if (!key) {
      out.unknown.push_back(name);
    } else if (key->use == KeyUse::kUnsupported && active(value)) {
      out.unsupported.push_back(fmt::format("{}: {} ({})", name, short_text(value), key->what));
    } else if (key->use == KeyUse::kIgnored || key->use == KeyUse::kUnsupported) {
      out.ignored.push_back(name);
    } else if (name == "text_config") {
      out.ignored.push_back("text_config (the file's top level describes the language model)");
    } else {
      out.ignored.push_back(
          fmt::format("{} (not in force here)", name));  // e.g. experts per token, no experts
    }
  }
}

}  // namespace

// The key groups in a fixed order: the account (read, assumed) lists them in it.
ModelImport read_hf_config(const std::string& json_text, const std::string& source,
                           std::optional<int> seq_len) {
  json root = hf_parse_config(json_text, source);
  ModelImport out;
  // Multimodal configs keep the language model in text_config.
  const json* config = &root;
  if (!root.contains("num_hidden_layers") && !root.contains("n_layer") && root.contains("text_config") &&
      root["text_config"].is_object()) {
    config = &root["text_config"];
    out.consulted.push_back("text_config");
    out.assumed.push_back("the language model read from text_config (the rest describes other towers)");
  }
  ConfigReader r(*config, source, out);
  out.model_type = r.string_value({"model_type"}).value_or("");
  if (const auto it = config->find("architectures"); it != config->end()) {
    r.mark_used("architectures");
    if (it->is_array() && !it->empty() && (*it)[0].is_string())
      out.architecture = (*it)[0].get<std::string>();
  }
  hf_read_model_shape(r, source, out);
  hf_read_mlp(r, out);
  hf_read_norm(r, out);
  hf_read_seq_len(r, source, seq_len, out);
  hf_read_embeddings_and_dtype(r, source, out);
  read_unmodelled_features(*config, r, out);
  hf_read_dropout(*config, r, out);
  hf_sort_unread_keys(*config, r, out);
  return out;
}

}  // namespace pipesim
