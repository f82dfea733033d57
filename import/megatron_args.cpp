#include "import/megatron_args.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <set>

#include "base/did_you_mean.h"
#include "base/errors.h"
#include "import/megatron_layout.h"

namespace pipesim {
namespace {

// Tokenizers whose vocabulary has one size whatever files they load (Megatron's --tokenizer-type):
// GPT-2's BPE and the BERT word pieces as published.
std::optional<int> tokenizer_vocabulary(const std::string& type) {
  static const std::map<std::string, int> sizes{
      {"GPT2BPETokenizer", 50257}, {"BertWordPieceLowerCase", 30522}, {"BertWordPieceCase", 28996}};
  const auto it = sizes.find(type);
  return it == sizes.end() ? std::nullopt : std::optional<int>(it->second);
}

// Arguments that take no value, so that the next token is not taken for one.
bool is_flag(const std::string& name) {
  const ImportKey* key = megatron_argument_keys().find(name);
  return key && key->flag;
}

struct Argument {
  std::string value;  // "" for a flag
  bool flag = false;
};

class ArgumentReader {
 public:
  ArgumentReader(const std::vector<std::string>& tokens, ModelImport& out) : out_(out) {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      const std::string& token = tokens[i];
      if (token.rfind("--", 0) != 0 || token.size() == 2) {
        throw InputError(fmt::format(
            "Megatron argument {} ('{}'): expected --name or --name value{}", i + 1, token,
            token.rfind('-', 0) == 0 ? " (pipesim's own options, such as -o, go before --)" : ""));
      }
      std::string name = token.substr(2);
      Argument argument;
      const auto eq = name.find('=');
      if (eq != std::string::npos) {
        argument.value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      for (char& c : name) c = c == '_' ? '-' : c;  // Megatron's argparse takes --a_b as --a-b too
      const bool valued = eq != std::string::npos;  // --name=value
      if (!valued && !is_flag(name) && i + 1 < tokens.size() && tokens[i + 1].rfind("--", 0) != 0) {
        // Every value up to the next --name: argparse's nargs='+' arguments (--data-path 0.5 a 0.5 b,
        // --recompute-modules mlp moe) take several.
        argument.value = tokens[++i];
        while (i + 1 < tokens.size() && tokens[i + 1].rfind("--", 0) != 0)
          argument.value += " " + tokens[++i];
      } else if (!valued) {
        argument.flag = true;
      }
      order_.push_back(name);
      arguments_[name] = argument;
    }
  }

  bool has(const std::string& name) {
    consult(name);
    return arguments_.count(name) > 0;
  }

  std::optional<int> positive_int(const std::string& name, const char* field) {
    if (!has(name)) return std::nullopt;
    const std::string& text = arguments_[name].value;
    int value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < 1) {
      throw InputError(fmt::format("--{} '{}': expected a positive integer ({})", name, text, field));
    }
    if (field[0] != '\0') out_.read.push_back(fmt::format("--{} {} -> {}", name, value, field));
    return value;
  }

  int required_int(const std::string& name, const char* field) {
    const auto value = positive_int(name, field);
    if (!value) throw InputError(fmt::format("no --{} (the model's {}): Megatron requires it", name, field));
    return *value;
  }

  std::optional<double> fraction(const std::string& name) {
    if (!has(name)) return std::nullopt;
    const std::string& text = arguments_[name].value;
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(value >= 0 && value <= 1))
      throw InputError(fmt::format("--{} '{}': expected a probability in [0, 1]", name, text));
    return value;
  }

  std::string text(const std::string& name) {
    consult(name);
    return arguments_.count(name) ? arguments_[name].value : "";
  }

  // Arguments not read, sorted by the key table: ignored, unsupported (with why, where in force) and
  // unknown. An unknown one close to a known one is a typo Megatron's argparse would refuse: a UsageError
  // with a did-you-mean, unless lenient.
  void account_for_the_rest(bool lenient) {
    const ImportKeyTable& table = megatron_argument_keys();
    const std::vector<std::string> known = table.names();
    for (const std::string& name : order_) {
      if (used_.count(name)) continue;
      used_.insert(name);
      const Argument& a = arguments_[name];
      const std::string shown = a.flag ? "--" + name : fmt::format("--{} {}", name, a.value);
      // A size of 1 (or 0) turns the feature off.
      const bool off = a.value == "1" || a.value == "0";
      const ImportKey* key = table.find(name);
      if (key && key->use == KeyUse::kUnsupported && !off) {
        out_.unsupported.push_back(fmt::format("{} ({})", shown, key->what));
      } else if (key) {
        out_.ignored.push_back(shown);
      } else if (const std::string typo = near_miss(name, known, 2, 6); !typo.empty() && !lenient) {
        throw UsageError(fmt::format(
            "Megatron argument --{}: not an argument pipesim knows; did you mean '--{}'? (Megatron's "
            "argparse refuses an unknown argument; pipesim import megatron --lenient lists it as unknown "
            "instead)",
            name, typo));
      } else {
        out_.unknown.push_back(shown);
      }
    }
  }

 private:
  // Every lookup goes through the key table (megatron_argument_keys): one it lacks is a pipesim bug.
  void consult(const std::string& name) {
    megatron_argument_keys().consulted(name);
    used_.insert(name);
    if (std::find(out_.consulted.begin(), out_.consulted.end(), name) == out_.consulted.end())
      out_.consulted.push_back(name);
  }

  ModelImport& out_;
  std::vector<std::string> order_;
  std::map<std::string, Argument> arguments_;
  std::set<std::string> used_;
};

// --moe-layer-freq: 1 (every layer a MoE), or a Python list expression as Megatron evaluates it,
// "[0]*3+[1]*58" or "[0,0,1,1]": leading dense layers then MoE layers become model.moe.dense_layers. Another
// integer n puts experts on layers 0, n, 2n, ... (pipesim's layer_step n: on n-1, 2n-1, ...: the same count
// of MoE layers over whole periods, a stage's share may differ by one); any other pattern is not supported.
void read_moe_layer_freq(const std::string& text, ModelImport& out) {
  MixtureOfExperts& moe = out.model.moe;
  std::vector<int> pattern;
  bool parsed = true;
  if (text.find('[') == std::string::npos) {
    int n = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
    if (error != std::errc() || end != text.data() + text.size() || n < 1) {
      parsed = false;
    } else {
      moe.layer_step = n;
      out.read.push_back(fmt::format("--moe-layer-freq {} -> model.moe.layer_step: {}", n, n));
      if (n > 1)
        out.assumed.push_back(fmt::format(
            "--moe-layer-freq {}: Megatron's experts on layers 0, {}, ...; pipesim's on {}, {}, ...", n, n,
            n - 1, 2 * n - 1));
      return;
    }
  } else {
    // Terms joined by '+': "[a,b,...]" or "[a]*k".
    std::string s;
    for (char c : text)
      if (c != ' ') s += c;
    size_t at = 0;
    while (parsed && at < s.size()) {
      if (s[at] != '[') {
        parsed = false;
        break;
      }
      const size_t close = s.find(']', at);
      if (close == std::string::npos) {
        parsed = false;
        break;
      }
      std::vector<int> items;
      std::string item;
      for (size_t k = at + 1; k <= close; ++k) {
        if (s[k] == ',' || s[k] == ']') {
          if (item == "0" || item == "1")
            items.push_back(item == "1");
          else if (!item.empty())
            parsed = false;
          item.clear();
        } else {
          item += s[k];
        }
      }
      at = close + 1;
      int times = 1;
      if (at < s.size() && s[at] == '*') {
        const size_t end = s.find('+', at);
        const std::string count =
            s.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
        const auto [ptr, error] = std::from_chars(count.data(), count.data() + count.size(), times);
        if (error != std::errc() || ptr != count.data() + count.size() || times < 0) parsed = false;
        at = end == std::string::npos ? s.size() : end;
      }
      for (int k = 0; k < times; ++k) pattern.insert(pattern.end(), items.begin(), items.end());
      if (at < s.size() && s[at] == '+') ++at;
    }
  }
  const auto first_moe = std::find(pattern.begin(), pattern.end(), 1);
  const bool dense_then_moe = parsed && static_cast<int>(pattern.size()) == out.model.layers &&
                              std::find(first_moe, pattern.end(), 0) == pattern.end();
  if (!dense_then_moe) {
    out.unsupported.push_back(fmt::format(
        "--moe-layer-freq {} (expected 1 or dense layers then MoE layers over all {} layers: priced as every "
        "layer a MoE)",
        text, out.model.layers));
    return;
  }
  moe.dense_layers = static_cast<int>(first_moe - pattern.begin());
  out.read.push_back(
      fmt::format("--moe-layer-freq {} -> model.moe.dense_layers: {}", text, moe.dense_layers));
}

// A mixture of experts into model.moe, latent attention into model.mla; the features the costs do not
// represent yet (spec/unmodelled_features.h) into model.fp8, so that the scenario is
// refused rather than priced dense.
void read_unmodelled_arguments(ArgumentReader& r, ModelImport& out) {
  if (const auto experts = r.positive_int("num-experts", "model.moe.experts")) {
    out.model.moe.experts = *experts;
    out.model.moe.experts_per_token =
        r.positive_int("moe-router-topk", "model.moe.experts_per_token").value_or(0);
    if (out.model.moe.experts_per_token == 0) {
      out.model.moe.experts_per_token = std::min(2, *experts);
      out.assumed.push_back(
          fmt::format("no --moe-router-topk: {} (Megatron's default)", out.model.moe.experts_per_token));
    }
    out.model.moe.expert_ffn_hidden =
        r.positive_int("moe-ffn-hidden-size", "model.moe.expert_ffn_hidden").value_or(0);
    if (const auto shared = r.positive_int("moe-shared-expert-intermediate-size", "")) {
      const int width =
          out.model.moe.expert_ffn_hidden > 0 ? out.model.moe.expert_ffn_hidden : out.model.ffn();
      out.model.moe.shared_experts = std::max(1, (*shared + width / 2) / width);
      out.read.push_back(
          fmt::format("--moe-shared-expert-intermediate-size {} -> model.moe.shared_experts: {}", *shared,
                      out.model.moe.shared_experts));
    }
  }
  if (const std::string freq = r.text("moe-layer-freq"); !freq.empty() && out.model.moe.any())
    read_moe_layer_freq(freq, out);
  if (r.has("multi-latent-attention")) {
    LatentAttention& mla = out.model.mla;
    // Absent sizes keep MLATransformerConfig's defaults (DeepSeek-V3's 512, 128, 64, 128; no query latent).
    mla.kv_lora_rank = r.positive_int("kv-lora-rank", "model.mla.kv_lora_rank").value_or(512);
    mla.q_lora_rank = r.positive_int("q-lora-rank", "model.mla.q_lora_rank").value_or(0);
    mla.qk_nope_head_dim = r.positive_int("qk-head-dim", "model.mla.qk_nope_head_dim").value_or(128);
    mla.qk_rope_head_dim = r.positive_int("qk-pos-emb-head-dim", "model.mla.qk_rope_head_dim").value_or(64);
    mla.v_head_dim = r.positive_int("v-head-dim", "model.mla.v_head_dim").value_or(128);
    out.read.push_back(fmt::format(
        "--multi-latent-attention -> model.mla (kv_lora_rank {}, q_lora_rank {}, head widths {} + {}, values "
        "{})",
        mla.kv_lora_rank, mla.q_lora_rank, mla.qk_nope_head_dim, mla.qk_rope_head_dim, mla.v_head_dim));
  }
  if (const auto mtp = r.positive_int("mtp-num-layers", "model.mtp_layers")) out.model.mtp_layers = *mtp;
  // --fp8-format (hybrid: E4M3 forward, E5M2 gradients; e4m3 both) changes no cost; --fp8-recipe does.
  if (const std::string format = r.text("fp8-format"); !format.empty()) {
    const std::string recipe = r.text("fp8-recipe");
    const std::string name = recipe.empty() ? "delayed" : recipe;
    const auto known = std::find_if(fp8_recipe_names().begin(), fp8_recipe_names().end(),
                                    [&](const auto& entry) { return entry.first == name; });
    if (known == fp8_recipe_names().end()) {
      out.model.fp8 = Fp8Recipe::kDelayed;
      out.unsupported.push_back(fmt::format("--fp8-recipe {} (priced as delayed scaling)", recipe));
    } else {
      out.model.fp8 = known->second;
    }
    out.read.push_back(
        fmt::format("--fp8-format {}{} -> model.fp8: {}", format,
                    recipe.empty() ? " (no --fp8-recipe: Megatron's delayed)" : " --fp8-recipe " + recipe,
                    fp8_recipe_name(out.model.fp8)));
  }
}

// The model's shape: layers, width, heads, and the sequence length.
void megatron_read_model_shape(ArgumentReader& r, ModelImport& out) {
  TransformerModel& m = out.model;
  m.layers = r.required_int("num-layers", "layers");
  m.hidden = r.required_int("hidden-size", "hidden");
  m.heads = r.required_int("num-attention-heads", "heads");
  if (m.hidden % m.heads != 0 && !r.has("kv-channels"))
    throw InputError(
        fmt::format("--num-attention-heads {} does not divide --hidden-size {} and there is no --kv-channels "
                    "(each head's "
                    "width)",
                    m.heads, m.hidden));
  if (const auto s = r.positive_int("seq-length", "seq_len")) {
    m.seq_len = *s;
  } else if (const auto p = r.positive_int("max-position-embeddings", "seq_len")) {
    m.seq_len = *p;
    out.assumed.push_back("no --seq-length: the sequence is --max-position-embeddings long");
  } else {
    throw InputError("no --seq-length (tokens per sequence): Megatron requires it");
  }
}

// The vocabulary as Megatron pads it: to a multiple of --make-vocab-size-divisible-by times the
// tensor-parallel size (read before). Its raw size comes from --vocab-size, pipesim's --vocab or a fixed-size
// tokenizer.
void megatron_read_vocabulary(ArgumentReader& r, MegatronImport& result, std::optional<int> vocab) {
  ModelImport& out = result.imported;
  const int divisible_by = r.positive_int("make-vocab-size-divisible-by", "").value_or(128);
  int raw_vocab = 0;
  if (const auto v = r.positive_int("vocab-size", "")) {
    raw_vocab = *v;
  } else if (vocab) {
    raw_vocab = *vocab;
    out.assumed.push_back(
        fmt::format("vocabulary {} from pipesim's --vocab (Megatron reads it from the "
                    "tokenizer)",
                    *vocab));
  } else if (const auto fixed = tokenizer_vocabulary(r.text("tokenizer-type"))) {
    raw_vocab = *fixed;
    out.read.push_back(fmt::format("--tokenizer-type {} -> vocabulary {} (that tokenizer's fixed size)",
                                   r.text("tokenizer-type"), *fixed));
  } else {
    const std::string tokenizer = r.text("tokenizer-type");
    throw InputError(fmt::format(
        "no --vocab-size{}: Megatron reads the vocabulary from the tokenizer's files; give its size "
        "with pipesim's --vocab (e.g. 50257 for GPT-2's, 128256 for Llama 3's)",
        tokenizer.empty() ? "" : fmt::format(" and --tokenizer-type {} has no fixed size", tokenizer)));
  }
  TransformerModel& m = out.model;
  const int multiple = divisible_by * result.tensor_parallel;
  m.vocab = (raw_vocab + multiple - 1) / multiple * multiple;
  out.read.push_back(
      fmt::format("vocabulary {} padded to {} (a multiple of {} x {}, as Megatron pads it) "
                  "-> vocab",
                  raw_vocab, m.vocab, divisible_by, result.tensor_parallel));
}

// Grouped-query attention: --num-query-groups counts only with --group-query-attention.
void megatron_read_query_groups(ArgumentReader& r, ModelImport& out) {
  TransformerModel& m = out.model;
  if (r.has("group-query-attention")) {
    const int groups = r.positive_int("num-query-groups", "kv_heads").value_or(1);
    if (m.heads % groups != 0)
      throw InputError(
          fmt::format("--num-query-groups {} does not divide --num-attention-heads {}", groups, m.heads));
    m.kv_heads = groups == m.heads ? 0 : groups;
  } else if (r.has("num-query-groups")) {
    out.assumed.push_back(
        "--num-query-groups without --group-query-attention: Megatron ignores it (multi-head)");
  }
}

// The MLP: gated with --swiglu, and its width, Megatron's default depending on the kind.
void megatron_read_mlp(ArgumentReader& r, ModelImport& out) {
  TransformerModel& m = out.model;
  if (r.has("swiglu")) {
    m.mlp = MlpKind::kSwiglu;
    out.read.push_back("--swiglu -> mlp: swiglu");
  } else {
    m.mlp = MlpKind::kGelu;
    out.assumed.push_back("no --swiglu: a GELU MLP (two matrices), Megatron's default");
  }
  if (const auto f = r.positive_int("ffn-hidden-size", "ffn_hidden")) {
    m.ffn_hidden = *f;
  } else {
    m.ffn_hidden =
        m.mlp == MlpKind::kSwiglu ? static_cast<int>(4.0 * m.hidden * 2 / 3 / 64) * 64 : 4 * m.hidden;
    out.assumed.push_back(fmt::format("no --ffn-hidden-size: {} (Megatron's default, {})", m.ffn_hidden,
                                      m.mlp == MlpKind::kSwiglu ? "int(4h x 2/3 / 64) x 64" : "4h"));
  }
}

// The norms: --normalization LayerNorm (Megatron's default) or RMSNorm.
void megatron_read_norm(ArgumentReader& r, ModelImport& out) {
  const std::string norm = r.text("normalization");
  if (norm == "RMSNorm") {
    out.model.norm = NormKind::kRmsNorm;
    out.read.push_back("--normalization RMSNorm -> norm: rmsnorm");
  } else if (norm == "LayerNorm") {
    out.read.push_back("--normalization LayerNorm -> norm: layernorm");
  } else if (norm.empty()) {
    out.assumed.push_back("no --normalization: LayerNorm, Megatron's default");
  } else {
    throw InputError(
        fmt::format("--normalization {}: expected LayerNorm or RMSNorm (Megatron's choices)", norm));
  }
}

// The numerics of training: the dtype, dropout and the attention kernel.
void megatron_read_dtype_and_dropout(ArgumentReader& r, ModelImport& out) {
  TransformerModel& m = out.model;
  if (r.has("bf16")) {
    m.dtype = "bf16";
    out.read.push_back("--bf16 -> dtype: bf16");
  } else if (r.has("fp16")) {
    m.dtype = "fp16";
    out.read.push_back("--fp16 -> dtype: fp16");
  } else {
    m.dtype = "fp32";
    out.assumed.push_back("neither --bf16 nor --fp16: fp32, Megatron's default");
  }
  const double attention_dropout = r.fraction("attention-dropout").value_or(0.1);
  const double hidden_dropout = r.fraction("hidden-dropout").value_or(0.1);
  m.dropout = attention_dropout > 0 || hidden_dropout > 0;
  out.read.push_back(fmt::format(
      "dropout {} (attention) and {} (hidden){} -> dropout: {}", attention_dropout, hidden_dropout,
      r.text("attention-dropout").empty() ? ", Megatron's defaults" : "", m.dropout));
  m.attention = AttentionKind::kFlash;
  out.assumed.push_back(r.has("use-flash-attn") ? "--use-flash-attn -> attention: flash"
                                                : "attention: flash (Transformer Engine's fused attention)");
}

// Activation recomputation: full or selective; a method other than uniform is not modelled.
void megatron_read_recompute(ArgumentReader& r, ModelImport& out) {
  TransformerModel& m = out.model;
  const std::string granularity = r.text("recompute-granularity");
  if (granularity == "full") {
    m.recompute = Recompute::kFull;
  } else if (granularity == "selective" || r.has("recompute-activations")) {
    m.recompute = Recompute::kSelective;
  } else if (!granularity.empty()) {
    throw InputError(fmt::format("--recompute-granularity '{}': expected full or selective", granularity));
  }
  if (m.recompute != Recompute::kNone) {
    out.read.push_back(
        fmt::format("recompute granularity -> recompute: {}", name_in(recompute_names(), m.recompute)));
  }
  if (const auto method = r.text("recompute-method"); !method.empty() && method != "uniform") {
    out.unsupported.push_back(
        fmt::format("--recompute-method {} (pipesim recomputes every layer alike)", method));
  }
}

// The batch sizes and the interleaved chunks per rank (given, or from the layers per virtual stage).
void megatron_read_batch_and_chunks(ArgumentReader& r, MegatronImport& result) {
  ModelImport& out = result.imported;
  const int layers = out.model.layers;
  result.micro_batch = r.positive_int("micro-batch-size", "samples per microbatch (b)").value_or(1);
  if (const auto g = r.positive_int("global-batch-size", "global batch over all replicas"))
    result.global_batch = *g;
  if (const auto v = r.positive_int("virtual-pipeline-model-parallel-size", "interleaved chunks")) {
    result.chunks = *v;
  } else if (const auto k = r.positive_int("num-layers-per-virtual-pipeline-stage", "")) {
    if (layers % (result.pipeline_stages * *k) != 0) {
      throw InputError(
          fmt::format("--num-layers-per-virtual-pipeline-stage {}: {} layers do not split into "
                      "chunks of {} on {} stages",
                      *k, layers, *k, result.pipeline_stages));
    }
    result.chunks = layers / (result.pipeline_stages * *k);
    out.read.push_back(fmt::format("--num-layers-per-virtual-pipeline-stage {} -> {} interleaved chunks", *k,
                                   result.chunks));
  }
}

// An explicit --pipeline-model-parallel-layout: the chunks and the layers of every virtual stage.
void megatron_read_explicit_layout(ArgumentReader& r, MegatronImport& result, const std::string& layout) {
  if (r.has("decoder-first-pipeline-num-layers") || r.has("decoder-last-pipeline-num-layers")) {
    throw InputError(
        "--pipeline-model-parallel-layout with --decoder-first/last-pipeline-num-layers: give one or the "
        "other");
  }
  const MegatronLayout read =
      read_megatron_layout(layout, result.pipeline_stages, result.imported.model.layers);
  if (result.chunks != 1 && result.chunks != read.chunks) {
    throw InputError(
        fmt::format("--pipeline-model-parallel-layout '{}' has {} chunk(s) per rank, but the "
                    "virtual pipeline arguments say {}",
                    layout, read.chunks, result.chunks));
  }
  result.chunks = read.chunks;
  result.stage_layers = read.stage_layers;
  result.imported.read.push_back(
      fmt::format("--pipeline-model-parallel-layout {} -> {} chunk(s) per rank, the Megatron "
                  "entry's layer_split [{}]",
                  layout, read.chunks, fmt::join(read.stage_layers, ", ")));
}

// Uneven stages from the first/last stage's layers or the embedding and loss counted as layers.
void megatron_read_uneven_stages(ArgumentReader& r, MegatronImport& result) {
  const int first = r.positive_int("decoder-first-pipeline-num-layers", "").value_or(0);
  const int last = r.positive_int("decoder-last-pipeline-num-layers", "").value_or(0);
  const bool embedding = r.has("account-for-embedding-in-pipeline-split");
  const bool loss = r.has("account-for-loss-in-pipeline-split");
  if (result.pipeline_stages <= 1 || !(first > 0 || last > 0 || embedding || loss)) return;
  result.stage_layers = megatron_stage_layers(result.imported.model.layers, result.pipeline_stages,
                                              result.chunks, first, last, embedding, loss);
  result.imported.read.push_back(
      fmt::format("uneven stages ({}{}{}{}) -> the Megatron entry's layer_split [{}]",
                  first > 0 ? fmt::format("--decoder-first-pipeline-num-layers {} ", first) : "",
                  last > 0 ? fmt::format("--decoder-last-pipeline-num-layers {} ", last) : "",
                  embedding ? "--account-for-embedding-in-pipeline-split " : "",
                  loss ? "--account-for-loss-in-pipeline-split" : "", fmt::join(result.stage_layers, ", ")));
}

// Each head's width: --kv-channels, noted as head_dim only where it is not hidden / heads.
void megatron_read_head_width(ArgumentReader& r, ModelImport& out) {
  TransformerModel& m = out.model;
  if (const auto kv = r.positive_int("kv-channels", ""); kv) {
    if (static_cast<long long>(*kv) * m.heads != m.hidden) {
      m.head_dim = *kv;
      out.read.push_back(fmt::format("--kv-channels {} -> head_dim", *kv));
    } else {
      out.read.push_back(fmt::format("--kv-channels {} (= hidden / heads)", *kv));
    }
  }
}

// The job: tensor parallelism (its all-reduces blocking the compute stream), sequence parallelism and the
// distributed optimizer (ZeRO-1 over the data-parallel replicas, whose number the launch gives).
void megatron_read_job(ArgumentReader& r, MegatronImport& result) {
  ModelImport& out = result.imported;
  ParallelConfig& parallel = out.parallel;
  parallel.tensor = result.tensor_parallel;
  if (result.tensor_parallel > 1) {
    out.read.push_back(
        fmt::format("--tensor-model-parallel-size {} -> parallel.tensor", result.tensor_parallel));
  }
  if (const auto c = r.positive_int("context-parallel-size", "parallel.context (ring attention)")) {
    parallel.context = *c;
  }
  if (const auto e = r.positive_int("expert-model-parallel-size", "parallel.expert")) parallel.expert = *e;
  if (const auto u = r.positive_int("expert-tensor-parallel-size", "parallel.expert_tensor"))
    parallel.expert_tensor = *u;
  // DeepEP runs behind the flex dispatcher; alone, the flag changes nothing.
  const std::string dispatcher = r.text("moe-token-dispatcher-type");
  const std::string backend = r.text("moe-flex-dispatcher-backend");
  const bool deepep_flag = r.has("moe-enable-deepep");
  if (dispatcher == "flex" && (deepep_flag || backend == "deepep" || backend == "hybridep")) {
    // HybridEP is NVIDIA's DeepEP-style dispatch: a token once to each node, forwarded over NVLink there.
    parallel.deepep_dispatch = true;
    out.read.push_back(
        fmt::format("--moe-token-dispatcher-type flex {} -> parallel.expert_dispatch: deepep",
                    backend.empty() ? "--moe-enable-deepep" : "--moe-flex-dispatcher-backend " + backend));
  }
  if (r.has("sequence-parallel")) {
    parallel.sequence_parallel = result.tensor_parallel > 1;
    out.read.push_back(result.tensor_parallel > 1
                           ? "--sequence-parallel -> parallel.sequence_parallel"
                           : "--sequence-parallel without tensor parallelism: no effect");
  }
  parallel.overlap_grad_reduce = r.has("overlap-grad-reduce");
  if (parallel.overlap_grad_reduce) {
    out.read.push_back(
        "--overlap-grad-reduce -> parallel.overlap_grad_reduce: true (each stage's gradient reduction "
        "overlaps "
        "the other stages' remaining backwards)");
  } else {
    out.assumed.push_back(
        "no --overlap-grad-reduce: parallel.overlap_grad_reduce: false (Megatron's default: the gradient "
        "reductions start once every stage has finished its backwards)");
  }
  parallel.overlap_tensor_comm = r.has("tp-comm-overlap") && result.tensor_parallel > 1;
  if (r.has("tp-comm-overlap")) {
    out.read.push_back(
        result.tensor_parallel > 1
            ? "--tp-comm-overlap -> parallel.overlap_tensor_comm: true (each op's tensor-parallel "
              "collectives overlap its weight GEMMs)"
            : "--tp-comm-overlap without tensor parallelism: no effect");
  }
  if (r.has("use-distributed-optimizer")) {
    parallel.zero = 1;
    out.read.push_back(
        "--use-distributed-optimizer -> parallel.zero: 1 (the optimizer state sharded over the data-parallel "
        "and context-parallel ranks)");
  }
}

}  // namespace

// The key groups in the order Megatron's arguments are read: the account (read, assumed) keeps that order.
MegatronImport read_megatron_args(const std::vector<std::string>& args, std::optional<int> vocab,
                                  bool lenient) {
  MegatronImport result;
  ModelImport& out = result.imported;
  out.model_type = "megatron-gpt";
  ArgumentReader r(args, out);
  megatron_read_model_shape(r, out);
  // Parallel sizes come first: the vocabulary's padding depends on the tensor-parallel size.
  result.tensor_parallel = r.positive_int("tensor-model-parallel-size", "").value_or(1);
  result.pipeline_stages = r.positive_int("pipeline-model-parallel-size", "stages").value_or(1);
  megatron_read_vocabulary(r, result, vocab);
  megatron_read_query_groups(r, out);
  megatron_read_mlp(r, out);
  megatron_read_norm(r, out);
  TransformerModel& m = out.model;
  m.tied_embeddings = !r.has("untie-embeddings-and-output-weights");
  out.read.push_back(m.tied_embeddings ? "embeddings shared with the output layer (Megatron's default)"
                                       : "--untie-embeddings-and-output-weights -> tied_embeddings: false");
  megatron_read_dtype_and_dropout(r, out);
  megatron_read_recompute(r, out);
  megatron_read_batch_and_chunks(r, result);
  if (const std::string layout = r.text("pipeline-model-parallel-layout"); !layout.empty()) {
    megatron_read_explicit_layout(r, result, layout);
  } else {
    megatron_read_uneven_stages(r, result);
  }
  megatron_read_head_width(r, out);
  read_unmodelled_arguments(r, out);
  megatron_read_job(r, result);
  r.account_for_the_rest(lenient);
  return result;
}

std::vector<int> megatron_stage_layers(int layers, int stages, int chunks, int first, int last,
                                       bool embedding, bool loss) {
  std::vector<int> counts(static_cast<size_t>(stages) * chunks, 0);
  const auto share = [&](int total, int parts, const std::string& what) {
    if (parts < 1 || total < 0 || total % parts != 0) {
      throw InputError(fmt::format(
          "{}: {} layers do not split equally into {} chunk(s) (Megatron requires it)", what, total, parts));
    }
    return total / parts;
  };
  // Virtual stage c * stages + r is chunk c of rank r, in model order.
  if (first > 0 || last > 0) {
    const int middle_ranks = stages - (first > 0 ? 1 : 0) - (last > 0 ? 1 : 0);
    const int middle = layers - first - last;
    if (middle < 0 || (middle_ranks == 0 && middle != 0)) {
      throw InputError(fmt::format("--decoder-first/last-pipeline-num-layers {}/{}: more than the {} layers",
                                   first, last, layers));
    }
    const int first_chunk = first > 0 ? share(first, chunks, "--decoder-first-pipeline-num-layers") : 0;
    const int last_chunk = last > 0 ? share(last, chunks, "--decoder-last-pipeline-num-layers") : 0;
    const int middle_chunk =
        middle_ranks > 0 ? share(middle, middle_ranks * chunks, "the layers between the first and last stage")
                         : 0;
    for (int c = 0; c < chunks; ++c) {
      for (int r = 0; r < stages; ++r) {
        int& count = counts[static_cast<size_t>(c) * stages + r];
        count = r == 0 && first > 0 ? first_chunk : r == stages - 1 && last > 0 ? last_chunk : middle_chunk;
      }
    }
    return counts;
  }
  // The embedding and the loss as one layer each: equal virtual stages, the first and last one layer fewer.
  const int slots = layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
  const int each =
      share(slots, stages * chunks,
            "--account-for-embedding/loss-in-pipeline-split (the layers with the embedding and loss)");
  std::fill(counts.begin(), counts.end(), each);
  if (embedding) --counts.front();
  if (loss) --counts.back();
  return counts;
}

}  // namespace pipesim
