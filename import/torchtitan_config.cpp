#include "import/torchtitan_config.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "base/did_you_mean.h"
#include "base/errors.h"
#include "schedules/registry.h"

namespace pipesim {
namespace {

// torchtitan's Llama 3 flavors (torchtitan/models/llama3): dim, layers, heads, kv heads, FFN multiplier and
// rounding. Vocabulary: the Llama 3 tokenizer's 128256; the output layer is not tied.
struct Flavor {
  int dim, layers, heads, kv_heads;
  double ffn_multiplier;
  int multiple_of;
};
const std::map<std::string, Flavor>& llama3_flavors() {
  static const std::map<std::string, Flavor> flavors{{"8B", {4096, 32, 32, 8, 1.3, 1024}},
                                                     {"70B", {8192, 80, 64, 8, 1.3, 4096}},
                                                     {"405B", {16384, 126, 128, 8, 1.2, 4096}}};
  return flavors;
}

// torchtitan's deepseek_v3 flavors (torchtitan/models/deepseek_v3/__init__.py): MLA with latents of 512 (and
// q_lora_rank) and heads of 128 + 64 rotary, values 128; the first n_dense layers dense, the rest MoE with
// shared experts of the experts' width.
struct DeepSeekFlavor {
  int dim, layers, heads, q_lora_rank, dense_hidden, moe_hidden, experts, shared_experts, top_k, dense_layers,
      vocab;
};
const std::map<std::string, DeepSeekFlavor>& deepseek_v3_flavors() {
  static const std::map<std::string, DeepSeekFlavor> flavors{
      {"16B", {2048, 27, 16, 0, 10944, 1408, 64, 2, 6, 1, 102400}},
      {"236B", {5120, 60, 128, 1536, 12288, 1536, 160, 2, 6, 1, 102400}},
      {"671B", {7168, 61, 128, 1536, 18432, 2048, 256, 1, 8, 3, 129280}}};
  return flavors;
}

void read_deepseek_v3_flavor(const std::string& flavor, const std::string& source, ModelImport& out) {
  const auto it = deepseek_v3_flavors().find(flavor);
  if (it == deepseek_v3_flavors().end())
    throw InputError(fmt::format("{}: [model] flavor '{}': expected 16B, 236B or 671B (or give --hf-config)",
                                 source, flavor));
  const DeepSeekFlavor& f = it->second;
  TransformerModel& m = out.model;
  m.layers = f.layers;
  m.hidden = f.dim;
  m.heads = f.heads;
  m.kv_heads = 0;
  m.mlp = MlpKind::kSwiglu;
  m.norm = NormKind::kRmsNorm;
  m.ffn_hidden = f.dense_hidden;
  m.vocab = f.vocab;
  m.tied_embeddings = false;
  m.mla.kv_lora_rank = 512;
  m.mla.q_lora_rank = f.q_lora_rank;
  m.moe.experts = f.experts;
  m.moe.experts_per_token = f.top_k;
  m.moe.shared_experts = f.shared_experts;
  m.moe.expert_ffn_hidden = f.moe_hidden;
  m.moe.dense_layers = f.dense_layers;
  out.model_type = "deepseek_v3";
  out.architecture = "torchtitan deepseek_v3 " + flavor;
  out.read.push_back(fmt::format(
      "[model] deepseek_v3 {} -> {} layers (the first {} dense, SwiGLU of {}), hidden {}, MLA with {} heads "
      "(latents 512{}, heads 128 + 64, values 128), {} experts of {} ({} shared), {} per token, vocabulary "
      "{}, "
      "untied",
      flavor, m.layers, f.dense_layers, f.dense_hidden, m.hidden, m.heads,
      f.q_lora_rank > 0 ? fmt::format(" and {}", f.q_lora_rank) : "", f.experts, f.moe_hidden,
      f.shared_experts, f.top_k, m.vocab));
}

// torchtitan's FeedForward width: 4h, then 2/3 of it, times the multiplier, rounded up to multiple_of.
int llama_ffn(int dim, double multiplier, int multiple_of) {
  int hidden = 4 * dim;
  hidden = static_cast<int>(2 * hidden / 3);
  hidden = static_cast<int>(multiplier * hidden);
  return multiple_of * ((hidden + multiple_of - 1) / multiple_of);
}

class TomlReader {
 public:
  TomlReader(const toml::table& root, const std::string& source, ModelImport& out)
      : root_(root), source_(source), out_(out) {}

  // Every lookup goes through the key table (torchtitan_keys): one it lacks is a pipesim bug.
  const toml::node* node(const std::string& section, const std::string& key) {
    const std::string name = section + "." + key;
    torchtitan_keys().consulted(name);
    used_.insert(name);
    if (std::find(out_.consulted.begin(), out_.consulted.end(), name) == out_.consulted.end())
      out_.consulted.push_back(name);
    const toml::table* table = root_[section].as_table();
    return table ? table->get(key) : nullptr;
  }

  std::string where(const toml::node* n, const std::string& key) const {
    const auto& at = n->source().begin;
    return fmt::format("{}:{}:{}: key '{}'", source_, at.line, at.column, key);
  }

  std::optional<long long> integer(const std::string& section, const std::string& key) {
    const toml::node* n = node(section, key);
    if (!n) return std::nullopt;
    const auto value = n->value<int64_t>();
    if (!value || !n->is_integer())
      throw InputError(fmt::format("{}: expected an integer", where(n, section + "." + key)));
    return *value;
  }

  std::optional<int> positive(const std::string& section, const std::string& key, const char* field) {
    const auto value = integer(section, key);
    if (!value) return std::nullopt;
    if (*value < 1 || *value > (1 << 30))
      throw InputError(fmt::format("{}: expected a positive integer, got {}",
                                   where(node(section, key), section + "." + key), *value));
    if (field[0] != '\0') out_.read.push_back(fmt::format("{}.{} = {} -> {}", section, key, *value, field));
    return static_cast<int>(*value);
  }

  std::optional<std::string> text(const std::string& section, const std::string& key) {
    const toml::node* n = node(section, key);
    if (!n) return std::nullopt;
    const auto value = n->value<std::string>();
    if (!value) throw InputError(fmt::format("{}: expected a string", where(n, section + "." + key)));
    return *value;
  }

  // Every key not read, sorted by the key table: ignored, unsupported (with why, where in force) or
  // unknown. A section or key within two edits of a known one is a typo torchtitan would not read either:
  // an InputError with a did-you-mean, naming its line.
  void account_for_the_rest() {
    const ImportKeyTable& table = torchtitan_keys();
    std::vector<std::string> known_sections;
    for (const ImportKey& k : table.keys()) {
      const std::string section = k.name.substr(0, k.name.find('.'));
      if (std::find(known_sections.begin(), known_sections.end(), section) == known_sections.end())
        known_sections.push_back(section);
    }
    const auto is_known = [](const std::vector<std::string>& known, const std::string& name) {
      return std::find(known.begin(), known.end(), name) != known.end();
    };
    for (auto&& [section_key, section] : root_) {
      const std::string section_name(section_key.str());
      if (!is_known(known_sections, section_name)) {
        if (const std::string known = near_miss(section_name, known_sections, 2, 3); !known.empty()) {
          throw InputError(fmt::format("{}: not a torchtitan section; did you mean [{}]?",
                                       where(&section, "[" + section_name + "]"), known));
        }
      }
      const toml::table* table_node = section.as_table();
      if (!table_node) {
        out_.unknown.push_back(section_name);
        continue;
      }
      std::vector<std::string> in_section;
      for (const std::string& k : table.names()) {
        if (k.rfind(section_name + ".", 0) == 0) in_section.push_back(k);
      }
      for (auto&& [key, value] : *table_node) {
        const std::string name = section_name + "." + std::string(key.str());
        if (used_.count(name)) continue;
        const ImportKey* entry = table.find(name);
        if (!entry || entry->name.ends_with(".*")) {
          if (const std::string known = near_miss(name, in_section, 2, 4); !known.empty()) {
            throw InputError(fmt::format("{}: not a key torchtitan reads; did you mean '{}'?",
                                         where(&value, name), known.substr(section_name.size() + 1)));
          }
        }
        std::string shown = name;
        if (value.is_value()) {
          std::ostringstream text;
          value.visit([&text](auto&& v) { text << v; });
          shown += " = " + text.str();
        }
        const auto number = value.value<int64_t>();
        const bool off = (number && (*number == 1 || *number == 0 || *number == -1)) ||
                         (value.is_boolean() && !*value.value<bool>());
        if (entry && entry->use == KeyUse::kUnsupported && !off) {
          out_.unsupported.push_back(fmt::format("{} ({})", shown, entry->what));
        } else if (entry) {
          out_.ignored.push_back(shown);
        } else {
          out_.unknown.push_back(shown);
        }
      }
    }
  }

 private:
  const toml::table& root_;
  const std::string& source_;
  ModelImport& out_;
  std::set<std::string> used_;
};

// torchtitan's configs moved from TOML job files to a registry of Python config functions: such a file is
// recognised and answered with what pipesim reads, not with a TOML syntax error.
void reject_python_config(const std::string& text, const std::string& source) {
  const bool py_name = source.size() > 3 && source.ends_with(".py");
  const bool python = py_name || text.rfind("import ", 0) == 0 || text.rfind("from ", 0) == 0 ||
                      text.find("\ndef ") != std::string::npos ||
                      text.find("\nimport ") != std::string::npos ||
                      text.find("\nfrom torchtitan") != std::string::npos;
  if (!python) return;
  throw InputError(fmt::format(
      "{}: a Python file (torchtitan's config registry, which replaced its TOML job files), not a TOML job "
      "file: pipesim reads the job's values as TOML — [model] name and flavor, [training] local_batch_size, "
      "seq_len and mixed_precision_param, [parallelism] the degrees and the pipeline schedule, "
      "[activation_checkpoint] mode — so write those (the registry's function names them) into a .toml file, "
      "or import the model's config.json with `pipesim import hf` and give the pipeline there",
      source));
}

toml::table torchtitan_parse(const std::string& toml_text, const std::string& source) {
  try {
    return toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    throw InputError(fmt::format("{}:{}:{}: not TOML: {}", source, e.source().begin.line,
                                 e.source().begin.column, e.description()));
  }
}

// [model] name and flavor: the dimensions of one of torchtitan's Llama 3 flavors.
void torchtitan_read_flavor(const std::string& name, const std::string& flavor, const std::string& source,
                            ModelImport& out) {
  if (name == "deepseek_v3") return read_deepseek_v3_flavor(flavor, source, out);
  if (name != "llama3") {
    throw InputError(
        fmt::format("{}: [model] name '{}': pipesim knows torchtitan's llama3 and deepseek_v3 flavors; for "
                    "another model give its Hugging Face config.json (--hf-config)",
                    source, name));
  }
  const auto it = llama3_flavors().find(flavor);
  if (it == llama3_flavors().end()) {
    throw InputError(fmt::format("{}: [model] flavor '{}': expected 8B, 70B or 405B (or give --hf-config)",
                                 source, flavor));
  }
  const Flavor& f = it->second;
  TransformerModel& m = out.model;
  m.layers = f.layers;
  m.hidden = f.dim;
  m.heads = f.heads;
  m.kv_heads = f.kv_heads;
  m.mlp = MlpKind::kSwiglu;
  m.norm = NormKind::kRmsNorm;
  m.ffn_hidden = llama_ffn(f.dim, f.ffn_multiplier, f.multiple_of);
  m.vocab = 128256;
  m.tied_embeddings = false;
  out.model_type = "llama3";
  out.architecture = "torchtitan llama3 " + flavor;
  out.read.push_back(
      fmt::format("[model] llama3 {} -> {} layers, hidden {}, {} heads ({} kv), SwiGLU of {} "
                  "(torchtitan's FFN rule), RMSNorm, vocabulary 128256, untied",
                  flavor, m.layers, m.hidden, m.heads, m.kv_heads, m.ffn_hidden));
}

// The model: the Hugging Face config given (what the file said so far kept after it), else the flavor.
void torchtitan_read_model(TomlReader& r, const std::optional<ModelImport>& model, const std::string& source,
                           ModelImport& out) {
  const std::string name = r.text("model", "name").value_or("");
  const std::string flavor = r.text("model", "flavor").value_or("");
  if (model) {
    const std::vector<std::string> read_from_file = out.read;
    out = *model;
    out.read.insert(out.read.end(), read_from_file.begin(), read_from_file.end());
    out.assumed.push_back(
        fmt::format("the model from the Hugging Face config given, not [model] {} {}", name, flavor));
  } else {
    torchtitan_read_flavor(name, flavor, source, out);
  }
}

// Model converters swap the Linear layers: float8 for FP8 GEMMs (its [float8] recipe_name: tensorwise by
// default, rowwise), mx for Blackwell's MXFP8, both into model.fp8.
void torchtitan_read_converters(TomlReader& r, ModelImport& out) {
  const toml::node* converters = r.node("model", "converters");
  if (!converters) return;
  const toml::array* list = converters->as_array();
  if (!list)
    throw InputError(fmt::format("{}: expected a list of names", r.where(converters, "model.converters")));
  for (const toml::node& entry : *list) {
    const auto converter = entry.value<std::string>();
    if (!converter) throw InputError(fmt::format("{}: expected names", r.where(&entry, "model.converters")));
    if (*converter == "float8") {
      const std::string recipe = r.text("float8", "recipe_name").value_or("tensorwise");
      // rowwise_with_gw_hp keeps the weight gradient's GEMM in bf16: priced as rowwise (all three in FP8).
      out.model.fp8 = recipe.rfind("rowwise", 0) == 0 ? Fp8Recipe::kRowwise : Fp8Recipe::kTensorwise;
      if (recipe != "tensorwise" && recipe != "rowwise" && recipe != "rowwise_with_gw_hp")
        out.unsupported.push_back(fmt::format("float8.recipe_name {} (priced as tensorwise)", recipe));
      out.read.push_back(fmt::format("model.converters float8, recipe {} -> model.fp8: {}", recipe,
                                     fp8_recipe_name(out.model.fp8)));
    } else if (converter->rfind("mx", 0) == 0) {
      out.model.fp8 = Fp8Recipe::kMxfp8;
      out.read.push_back(fmt::format("model.converters {} -> model.fp8: mxfp8", *converter));
    } else {
      out.unsupported.push_back(
          fmt::format("model.converters {} (a converter pipesim does not know)", *converter));
    }
  }
}

// [training]: the sequence length and the dtype; then the converters, and no dropout (torchtitan has none).
void torchtitan_read_training(TomlReader& r, ModelImport& out) {
  TransformerModel& m = out.model;
  if (const auto s = r.positive("training", "seq_len", "seq_len"))
    m.seq_len = *s;
  else {
    m.seq_len = 2048;
    out.assumed.push_back("no training.seq_len: 2048, torchtitan's default");
  }
  const std::string precision = r.text("training", "mixed_precision_param").value_or("bfloat16");
  m.dtype = precision == "float32" ? "fp32" : "bf16";
  out.read.push_back(fmt::format("training.mixed_precision_param {} -> dtype: {}", precision, m.dtype));
  torchtitan_read_converters(r, out);
  m.dropout = false;
}

// The batch, the stages and the schedule; returns the stages per rank the schedule takes by default.
int torchtitan_read_schedule(TomlReader& r, const std::string& source, TorchtitanImport& result) {
  result.local_batch =
      r.positive("training", "local_batch_size", "sequences per step and pipeline replica (B)").value_or(0);
  if (result.local_batch == 0) {
    result.local_batch =
        r.positive("training", "batch_size", "sequences per step and pipeline replica (B)").value_or(8);
  }
  result.pipeline_stages = r.positive("parallelism", "pipeline_parallel_degree", "stages").value_or(1);
  const std::string schedule_class = r.text("parallelism", "pipeline_parallel_schedule").value_or("1F1B");
  try {
    result.schedule = canonical_schedule_name(schedule_class);
    make_schedule(result.schedule, ScheduleParams(source));
  } catch (const InputError& e) {
    throw InputError(
        fmt::format("{}: parallelism.pipeline_parallel_schedule '{}': {}", source, schedule_class, e.what()));
  }
  result.imported.read.push_back(
      fmt::format("parallelism.pipeline_parallel_schedule {} -> {}", schedule_class, result.schedule));
  return make_schedule(result.schedule, ScheduleParams(source))
      ->layout(result.pipeline_stages)
      .chunks_per_device;
}

// The stages per rank and the layers of each stage, with torchtitan's first/last-stage-less-layers weights.
void torchtitan_read_stage_split(TomlReader& r, const std::string& source, int default_chunks,
                                 TorchtitanImport& result) {
  ModelImport& out = result.imported;
  const int layers = out.model.layers;
  result.chunks = default_chunks;
  const int first_less =
      static_cast<int>(r.integer("parallelism", "pipeline_parallel_first_stage_less_layers").value_or(1));
  const int last_less =
      static_cast<int>(r.integer("parallelism", "pipeline_parallel_last_stage_less_layers").value_or(1));
  if (first_less < 0 || last_less < 0) {
    throw InputError(
        fmt::format("{}: parallelism.pipeline_parallel_first/last_stage_less_layers {}/{}: expected "
                    "integers >= 0",
                    source, first_less, last_less));
  }
  if (const auto per_stage = r.positive("parallelism", "pipeline_parallel_layers_per_stage", "")) {
    // torchtitan counts the embedding and the output as their less-layers weights here too.
    const int virtual_stages = (layers + first_less + last_less + *per_stage - 1) / *per_stage;
    if (virtual_stages % result.pipeline_stages != 0) {
      throw InputError(
          fmt::format("{}: {} layers in stages of {} make {} stages, not a multiple of the {} ranks", source,
                      layers, *per_stage, virtual_stages, result.pipeline_stages));
    }
    result.chunks = virtual_stages / result.pipeline_stages;
    out.read.push_back(
        fmt::format("parallelism.pipeline_parallel_layers_per_stage {} -> {} stage(s) per rank", *per_stage,
                    result.chunks));
  } else if (default_chunks > 1) {
    out.assumed.push_back(
        fmt::format("{} stages per rank, torchtitan's choice for a looped schedule", default_chunks));
  }
  const int virtual_stages = result.pipeline_stages * result.chunks;
  if (virtual_stages > 1) {
    result.stage_layers = torchtitan_stage_layers(layers, virtual_stages, first_less, last_less);
    out.read.push_back(fmt::format(
        "first/last_stage_less_layers {}/{} -> layer_split [{}] (torchtitan's split over {} stage(s))",
        first_less, last_less, fmt::join(result.stage_layers, ", "), virtual_stages));
  }
}

// m: the local batch over the microbatch size, or the count given, or microbatches of one sequence.
void torchtitan_read_microbatches(TomlReader& r, const std::string& source, TorchtitanImport& result) {
  if (const auto mb =
          r.positive("parallelism", "pipeline_parallel_microbatch_size", "samples per microbatch (b)")) {
    if (result.local_batch % *mb != 0) {
      throw InputError(
          fmt::format("{}: training.local_batch_size {} is not a multiple of "
                      "parallelism.pipeline_parallel_microbatch_size {}",
                      source, result.local_batch, *mb));
    }
    result.microbatches = result.local_batch / *mb;
  } else if (const auto count = r.positive("parallelism", "pipeline_parallel_microbatches", "m")) {
    result.microbatches = *count;
  } else {
    result.microbatches = result.local_batch;
    result.imported.assumed.push_back(
        "microbatches of 1 sequence (pipeline_parallel_microbatch_size's default)");
  }
}

// [activation_checkpoint]: torchtitan's selective mode recomputes every nth layer whole, or with option op
// every other matmul and the memory-bound ops of each block (pipesim's recompute: op).
void torchtitan_read_recompute(TomlReader& r, const std::string& source, ModelImport& out) {
  TransformerModel& m = out.model;
  const std::string ac = r.text("activation_checkpoint", "mode").value_or("selective");
  const std::string ac_option = r.text("activation_checkpoint", "selective_ac_option").value_or("2");
  if (ac == "full") {
    m.recompute = Recompute::kFull;
  } else if (ac == "selective") {
    m.recompute = ac_option == "op" ? Recompute::kOp : Recompute::kSelective;
    if (ac_option != "op") {
      out.unsupported.push_back(
          fmt::format("activation_checkpoint.selective_ac_option = {} (every {}th layer recomputed whole; "
                      "modelled as selective: "
                      "the attention core of every layer)",
                      ac_option, ac_option));
    }
  } else if (ac != "none") {
    throw InputError(
        fmt::format("{}: activation_checkpoint.mode '{}': expected none, selective or full", source, ac));
  }
  out.read.push_back(fmt::format("activation_checkpoint.mode {} -> recompute: {}", ac,
                                 name_in(recompute_names(), m.recompute)));
}

// The job: tensor parallelism, and data parallelism as FSDP shards (ZeRO-3) and/or DDP replicas.
void torchtitan_read_job(TomlReader& r, ModelImport& out) {
  ParallelConfig& parallel = out.parallel;
  parallel.tensor = r.positive("parallelism", "tensor_parallel_degree", "parallel.tensor").value_or(1);
  const auto shard = r.integer("parallelism", "data_parallel_shard_degree");
  const int replicate =
      r.positive("parallelism", "data_parallel_replicate_degree", "data-parallel replicas").value_or(1);
  int shards = 1;
  if (shard && *shard > 1) {
    shards = static_cast<int>(*shard);
    out.read.push_back(
        fmt::format("parallelism.data_parallel_shard_degree = {} -> FSDP over {} ranks: "
                    "parallel.zero: 3",
                    shards, shards));
  }
  parallel.data = shards * replicate;
  parallel.context =
      r.positive("parallelism", "context_parallel_degree", "parallel.context (ring attention)").value_or(1);
  // Expert parallelism borrows the data-shard and context ranks (and, with an expert tensor degree of 1, the
  // tensor ranks): Megatron's folding, which parallel.expert and parallel.expert_tensor describe.
  parallel.expert = r.positive("parallelism", "expert_parallel_degree", "parallel.expert").value_or(1);
  if (const auto etp = r.positive("parallelism", "expert_tensor_parallel_degree", "parallel.expert_tensor"))
    parallel.expert_tensor = *etp;
  if (shard && *shard == -1) {
    // The rest of the launch's GPUs: as few as the experts' groups need (every rank when there are none).
    const int needed = parallel.expert * parallel.expert_tensor_size();
    const int per_replica = parallel.tensor * parallel.context * replicate;
    shards = std::max(1, (needed + per_replica - 1) / per_replica);
    parallel.data = shards * replicate;
    if (shards > 1) parallel.zero = 3;
    out.assumed.push_back(fmt::format(
        "parallelism.data_parallel_shard_degree = -1 (the rest of the launch's GPUs): the file does not say "
        "how "
        "many; parallel.data is {} here{}: set it{} for the launch",
        parallel.data, shards > 1 ? ", the fewest ranks expert_parallel_degree needs, FSDP over them" : "",
        shards > 1 ? "" : " (and zero: 3)"));
  }
  // torchtitan shards with FSDP over the data-shard and context ranks together (its dp_shard_cp mesh).
  if (shards > 1 || parallel.context > 1) parallel.zero = 3;
  if (shards <= 1 && parallel.context > 1) {
    out.read.push_back(fmt::format(
        "context parallelism without data shards: FSDP over the {} context ranks: parallel.zero: 3",
        parallel.context));
  }
  if (parallel.data * parallel.context > 1) {
    // FSDP's (and DDP's) mixed-precision policy: torchtitan reduces gradients in fp32 unless told otherwise.
    const std::string reduce = r.text("training", "mixed_precision_reduce").value_or("float32");
    parallel.gradient_reduce_dtype = reduce == "float32" ? "fp32" : reduce == "bfloat16" ? "bf16" : "";
    if (parallel.gradient_reduce_dtype.empty()) {
      out.unsupported.push_back(
          fmt::format("training.mixed_precision_reduce = {} (expected float32 or "
                      "bfloat16): gradients reduced in the model's dtype",
                      reduce));
    } else {
      out.read.push_back(
          fmt::format("training.mixed_precision_reduce {} -> parallel.gradient_reduce_dtype: {}", reduce,
                      parallel.gradient_reduce_dtype));
    }
  }
  if (shards > 1 && replicate > 1) {
    out.assumed.push_back(fmt::format(
        "HSDP ({} replicas of {} shards): pipesim shards over all {} data-parallel ranks, torchtitan over "
        "each "
        "replica's {}: the sharded memory is a little lower and the gathers' groups larger than torchtitan's",
        replicate, shards, parallel.data, shards));
  }
}

}  // namespace

// The sections in a fixed order, model first: the account (read, assumed) lists them in it.
TorchtitanImport read_torchtitan_config(const std::string& toml_text, const std::string& source,
                                        const std::optional<ModelImport>& model) {
  reject_python_config(toml_text, source);
  const toml::table root = torchtitan_parse(toml_text, source);
  TorchtitanImport result;
  ModelImport& out = result.imported;
  TomlReader r(root, source, out);
  torchtitan_read_model(r, model, source, out);
  torchtitan_read_training(r, out);
  const int default_chunks = torchtitan_read_schedule(r, source, result);
  torchtitan_read_stage_split(r, source, default_chunks, result);
  torchtitan_read_microbatches(r, source, result);
  torchtitan_read_recompute(r, source, out);
  torchtitan_read_job(r, out);
  r.account_for_the_rest();
  return result;
}

std::vector<int> torchtitan_stage_layers(int layers, int stages, int input_weight, int output_weight) {
  if (stages <= 1) return {layers};
  const int effective = layers + input_weight + output_weight;
  const int each = effective / stages;
  const int extra = effective % stages;
  if (stages > effective || each == 0) {
    throw InputError(
        fmt::format("{} stages for {} layers and embedding/output weights {}/{}: torchtitan refuses "
                    "empty stages",
                    stages, layers, input_weight, output_weight));
  }
  if (input_weight > each || output_weight > each) {
    throw InputError(
        fmt::format("first/last_stage_less_layers {}/{} exceed the {} layers a stage gets: torchtitan "
                    "refuses it",
                    input_weight, output_weight, each));
  }
  std::vector<int> counts(stages, 0);
  int left = layers;
  for (int i = 0; i < stages; ++i) {
    int share = each + (i < extra ? 1 : 0);
    if (i == 0) share -= input_weight;
    if (i == stages - 1) share -= output_weight;
    counts[i] = std::min(std::max(share, 0), left);
    left -= counts[i];
  }
  return counts;
}

}  // namespace pipesim
