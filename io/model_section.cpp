#include "io/model_section.h"

#include <fmt/format.h>

#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "base/errors.h"
#include "cost_models/transformer/parallel_comm.h"
#include "io/hardware_profile_reader.h"

namespace pipesim {
namespace {

// A named choice: `value` is left as it is when the key is absent.
template <typename Enum>
void read_choice(const YamlReader& r, const YAML::Node& node, const std::string& key,
                 const NameTable<Enum>& names, const std::string& expected, Enum& value) {
  if (!node) return;
  std::vector<std::string> allowed;
  for (const auto& entry : names) allowed.push_back(entry.first);
  const std::string given = r.get_choice(node, key, allowed, expected);
  for (const auto& [name, choice] : names) {
    if (name == given) value = choice;
  }
}

// `model.moe`: a mixture of experts (spec/mixture_of_experts.h).
MixtureOfExperts read_moe(const YamlReader& r, const YAML::Node& moe) {
  const std::string key = "model.moe";
  r.expect_map(moe, key,
               {"experts", "experts_per_token", "shared_experts", "expert_ffn_hidden", "dense_layers",
                "layer_step", "load_imbalance", "capacity_factor"});
  if (!moe["experts"] || !moe["experts_per_token"])
    r.fail(moe, key,
           "{experts: E, experts_per_token: K} (and shared_experts, expert_ffn_hidden, dense_layers, "
           "load_imbalance, capacity_factor)");
  MixtureOfExperts m;
  m.experts = r.get_int(moe["experts"], key + ".experts", 1);
  m.experts_per_token = r.get_int(moe["experts_per_token"], key + ".experts_per_token", 1);
  if (m.experts_per_token > m.experts)
    r.fail(moe["experts_per_token"], key + ".experts_per_token",
           fmt::format("at most {} (the experts)", m.experts));
  if (moe["shared_experts"]) m.shared_experts = r.get_int(moe["shared_experts"], key + ".shared_experts", 0);
  if (moe["expert_ffn_hidden"])
    m.expert_ffn_hidden = r.get_int(moe["expert_ffn_hidden"], key + ".expert_ffn_hidden", 1);
  if (moe["dense_layers"]) m.dense_layers = r.get_int(moe["dense_layers"], key + ".dense_layers", 0);
  if (moe["layer_step"]) m.layer_step = r.get_int(moe["layer_step"], key + ".layer_step", 1);
  if (moe["load_imbalance"]) {
    m.load_imbalance = r.get_double(moe["load_imbalance"], key + ".load_imbalance", 1);
    // The most loaded rank can take at most every routed copy of the group: e times the mean at most, which
    // the expert parallelism decides; E is the bound whatever it is.
    if (m.load_imbalance > m.experts)
      r.fail(moe["load_imbalance"], key + ".load_imbalance",
             fmt::format("at most {} (the experts: one rank cannot take more than every token)", m.experts));
  }
  if (moe["capacity_factor"]) {
    m.capacity_factor = r.get_double(moe["capacity_factor"], key + ".capacity_factor", 0);
    if (m.capacity_factor > 0 && m.capacity_factor < 1.0 / m.experts_per_token)
      r.fail(moe["capacity_factor"], key + ".capacity_factor",
             "0 (dropless) or a factor of the mean tokens per expert that keeps some tokens (e.g. 1.0-2.0)");
  }
  return m;
}

// `model.mla`: multi-head latent attention (spec/latent_attention.h).
LatentAttention read_mla(const YamlReader& r, const YAML::Node& mla) {
  const std::string key = "model.mla";
  r.expect_map(mla, key,
               {"kv_lora_rank", "q_lora_rank", "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim"});
  if (!mla["kv_lora_rank"])
    r.fail(mla, key,
           "{kv_lora_rank: R} (and q_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim: DeepSeek's "
           "config names)");
  LatentAttention m;
  m.kv_lora_rank = r.get_int(mla["kv_lora_rank"], key + ".kv_lora_rank", 1);
  if (mla["q_lora_rank"]) m.q_lora_rank = r.get_int(mla["q_lora_rank"], key + ".q_lora_rank", 0);
  if (mla["qk_nope_head_dim"])
    m.qk_nope_head_dim = r.get_int(mla["qk_nope_head_dim"], key + ".qk_nope_head_dim", 0);
  if (mla["qk_rope_head_dim"])
    m.qk_rope_head_dim = r.get_int(mla["qk_rope_head_dim"], key + ".qk_rope_head_dim", 0);
  if (m.query_head_width() < 1)
    r.fail(mla, key, "qk_nope_head_dim + qk_rope_head_dim of at least 1 (each head's query/key width)");
  if (mla["v_head_dim"]) m.v_head_dim = r.get_int(mla["v_head_dim"], key + ".v_head_dim", 1);
  return m;
}

// What the costs do not represent yet (spec/unmodelled_features.h): read whole, so that a run can
// refuse it by its key and line, never dropped.
UnmodelledFeatures read_unmodelled(const YamlReader& r, const YAML::Node& node) {
  UnmodelledFeatures f;
  const auto located = [&](const char* key) {
    const std::string name = std::string("model.") + key;
    f.where[name] = r.where(node[key], name);
    return name;
  };
  if (node["sliding_window"])
    f.sliding_window = r.get_int(node["sliding_window"], located("sliding_window"), 1);
  if (node["attention_chunk"])
    f.attention_chunk = r.get_int(node["attention_chunk"], located("attention_chunk"), 1);
  return f;
}

TransformerModel read_model(const YamlReader& r, const YAML::Node& node) {
  r.expect_map(node, "model",
               {"layers",
                "hidden",
                "heads",
                "seq_len",
                "vocab",
                "kv_heads",
                "head_dim",
                "ffn_hidden",
                "mlp",
                "norm",
                "tied_embeddings",
                "attention",
                "causal",
                "dropout",
                "recompute",
                "dtype",
                "forward_elementwise_passes",
                "backward_elementwise_passes",
                "moe",
                "mla",
                "sliding_window",
                "attention_chunk",
                "mtp_layers",
                "fp8"});
  TransformerModel t;
  for (const char* key : {"layers", "hidden", "heads", "seq_len", "vocab"}) {
    if (!node[key])
      r.fail(node, std::string("model.") + key, "a value (layers, hidden, heads, seq_len, vocab)");
  }
  t.layers = r.get_int(node["layers"], "model.layers", 1);
  t.hidden = r.get_int(node["hidden"], "model.hidden", 1);
  t.heads = r.get_int(node["heads"], "model.heads", 1);
  t.seq_len = r.get_int(node["seq_len"], "model.seq_len", 1);
  t.vocab = r.get_int(node["vocab"], "model.vocab", 1);
  if (node["head_dim"]) {
    t.head_dim = r.get_int(node["head_dim"], "model.head_dim", 1);
  } else if (t.hidden % t.heads != 0) {
    r.fail(node["heads"], "model.heads",
           "a divisor of model.hidden (or give model.head_dim, each head's width)");
  }
  if (node["kv_heads"]) {
    t.kv_heads = r.get_int(node["kv_heads"], "model.kv_heads", 1);
    if (t.heads % t.kv_heads != 0) {
      r.fail(node["kv_heads"], "model.kv_heads",
             fmt::format("a divisor of model.heads ({}): key/value heads shared by groups of query heads",
                         t.heads));
    }
  }
  read_choice(r, node["mlp"], "model.mlp", mlp_names(),
              "gelu (two matrices, GPT) or swiglu (three matrices, Llama)", t.mlp);
  read_choice(r, node["norm"], "model.norm", norm_names(),
              "layernorm (a scale and a bias per channel, GPT) or rmsnorm (a scale only, Llama)", t.norm);
  if (node["ffn_hidden"]) t.ffn_hidden = r.get_int(node["ffn_hidden"], "model.ffn_hidden", 1);
  read_choice(
      r, node["attention"], "model.attention", attention_names(),
      "flash (fused, the s x s scores never stored: the default) or eager (scores and softmax stored)",
      t.attention);
  read_choice(r, node["recompute"], "model.recompute", recompute_names(),
              "none, selective (the attention core recomputed) or full (each layer's forward rerun in its "
              "backward)",
              t.recompute);
  t.tied_embeddings = node["tied_embeddings"] && r.get_bool(node["tied_embeddings"], "model.tied_embeddings");
  t.dropout = node["dropout"] && r.get_bool(node["dropout"], "model.dropout");
  if (node["causal"]) t.causal = r.get_bool(node["causal"], "model.causal");
  if (node["dtype"]) {
    t.dtype = r.get_choice(node["dtype"], "model.dtype", {"bf16", "fp16", "fp32"}, "bf16, fp16 or fp32");
  }
  if (node["forward_elementwise_passes"]) {
    t.forward_elementwise_passes =
        r.get_double(node["forward_elementwise_passes"], "model.forward_elementwise_passes", 0);
  }
  if (node["backward_elementwise_passes"]) {
    t.backward_elementwise_passes =
        r.get_double(node["backward_elementwise_passes"], "model.backward_elementwise_passes", 0);
  }
  if (const YAML::Node moe = node["moe"]) t.moe = read_moe(r, moe);
  if (const YAML::Node mla = node["mla"]) {
    t.mla = read_mla(r, mla);
    // Latent attention rebuilds a key and a value for every query head: there are no shared heads.
    if (t.kv_heads > 0 && t.kv_heads != t.heads)
      r.fail(node["kv_heads"], "model.kv_heads",
             fmt::format("{} (model.heads) or no key: multi-head latent attention has a key and a value per "
                         "query head",
                         t.heads));
  }
  if (node["mtp_layers"]) t.mtp_layers = r.get_int(node["mtp_layers"], "model.mtp_layers", 0);
  read_choice(
      r, node["fp8"], "model.fp8", fp8_recipe_names(),
      "an FP8 recipe: delayed (Transformer Engine's default), tensorwise or rowwise (current scaling: "
      "torchtitan's float8), blockwise (DeepSeek-V3's tiles) or mxfp8 (Blackwell)",
      t.fp8);
  if (t.fp8 != Fp8Recipe::kNone && t.attention != AttentionKind::kFlash)
    r.fail(node["fp8"], "model.fp8",
           "flash attention with it (model.attention: flash): FP8 training runs fused attention kernels");
  t.unmodelled = read_unmodelled(r, node);
  return t;
}

HardwareProfile read_hardware(const YamlReader& r, const YAML::Node& node) {
  r.expect_map(node, "hardware",
               {"profile", "memory_capacity_gb", "memory_bandwidth_gb_per_s", "reserve_gb", "link",
                "inter_node_link", "op_time_scale"});
  if (!node["profile"]) r.fail(node, "hardware.profile", "a profile name in share/profiles/ or a path");
  const std::string value = r.get_string(node["profile"], "hardware.profile");
  namespace fs = std::filesystem;
  const fs::path beside = fs::path(r.source()).parent_path() / value;
  std::string path;
  try {
    path = fs::path(value).is_relative() && fs::is_regular_file(beside) ? beside.string()
                                                                        : resolve_profile_path(value);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", r.where(node["profile"], "hardware.profile"), e.what()));
  }
  HardwareProfile profile = load_hardware_profile(path);
  if (node["memory_capacity_gb"]) {
    profile.memory_capacity_gb =
        r.get_double(node["memory_capacity_gb"], "hardware.memory_capacity_gb", 1e-6);
    if (!(profile.memory_capacity_gb <= 1e6))
      r.fail(node["memory_capacity_gb"], "hardware.memory_capacity_gb",
             "a device's memory in GiB, at most 1e6");
  }
  // Another memory on the same chip (an H100 with HBM2e): the memory-bound kernels and the optimizer step
  // scale with it, measured or not.
  if (node["memory_bandwidth_gb_per_s"]) {
    const double bandwidth =
        r.get_double(node["memory_bandwidth_gb_per_s"], "hardware.memory_bandwidth_gb_per_s", 1e-3);
    if (!(bandwidth <= 1e7))
      r.fail(node["memory_bandwidth_gb_per_s"], "hardware.memory_bandwidth_gb_per_s", "GB/s, at most 1e7");
    const double ratio = bandwidth / profile.memory_bandwidth_gb_per_s;
    profile.memory_bandwidth_gb_per_s = bandwidth;
    profile.elementwise_gb_per_s *= ratio;
    profile.optimizer_gb_per_s *= ratio;
  }
  // The scenario's own links in place of the profile's (a machine the profile's device sits in): each must
  // say where its figures come from. A map without a source changes fields of the profile's own link
  // (--set hardware.link.bandwidth_gb_per_s=100), which its source then records.
  for (const char* key : {"link", "inter_node_link"}) {
    if (!node[key]) continue;
    const std::string name = std::string("hardware.") + key;
    std::optional<LinkSpec>& link = std::string(key) == "link" ? profile.link : profile.inter_node_link;
    if (node[key].IsMap() && !node[key]["source"] && link) {
      link = read_link_change(r, node[key], name, *link);
      continue;
    }
    if (!node[key].IsMap() || !node[key]["source"]) {
      r.fail(
          node[key], name,
          fmt::format("{{bandwidth_gb_per_s, latency_us, source: where the figures come from}} (profile {} "
                      "has no {} whose fields a map without a source could change)",
                      profile.name, key));
    }
    link = read_link(r, node[key], name);
  }
  if (const YAML::Node scale = node["op_time_scale"]) {
    r.expect_map(scale, "hardware.op_time_scale", {"forward", "backward_input", "backward_weight", "source"});
    if (!scale["source"]) {
      r.fail(scale, "hardware.op_time_scale.source",
             "where the factors come from (a traced run, its configuration)");
    }
    OpTimeScale& s = profile.op_time_scale;
    s.source = r.get_string(scale["source"], "hardware.op_time_scale.source");
    for (const auto& [key, field] :
         {std::pair{"forward", &s.forward}, std::pair{"backward_input", &s.backward_input},
          std::pair{"backward_weight", &s.backward_weight}}) {
      if (!scale[key]) continue;
      *field = r.get_double(scale[key], std::string("hardware.op_time_scale.") + key, 1e-3);
      if (!(*field <= 1e3))
        r.fail(scale[key], std::string("hardware.op_time_scale.") + key, "a factor in [0.001, 1000]");
    }
  }
  if (node["reserve_gb"]) {
    profile.reserve_gb = r.get_double(node["reserve_gb"], "hardware.reserve_gb", 0);
    if (profile.memory_capacity_gb <= 0 || profile.reserve_gb >= profile.memory_capacity_gb) {
      r.fail(node["reserve_gb"], "hardware.reserve_gb",
             fmt::format(
                 "GiB below the device's capacity ({:g} GiB{})", profile.memory_capacity_gb,
                 profile.memory_capacity_gb > 0 ? "" : ": the profile states none; give memory_capacity_gb"));
    }
  }
  return profile;
}

}  // namespace

LayerSplit read_layer_split(const YamlReader& r, const YAML::Node& node, const std::string& key,
                            std::vector<int>& stage_layers) {
  const char* expected =
      "'even', 'zb' (first and last stage one layer fewer), 'balanced' (min-max split of the attention and "
      "MLP halves, embedding, final norm and output layer by predicted time) or a list of layers per stage "
      "([3, 4, 4, 3]; devices x chunks of them in model order)";
  if (node && node.IsSequence()) {
    stage_layers.clear();
    for (size_t i = 0; i < node.size(); ++i) {
      stage_layers.push_back(r.get_int(node[i], fmt::format("{}[{}]", key, i), 0));
    }
    if (stage_layers.empty()) r.fail(node, key, expected);
    return LayerSplit::kExplicit;
  }
  LayerSplit split = LayerSplit::kEven;
  read_choice(r, node, key, layer_split_names(), expected, split);
  if (split == LayerSplit::kExplicit) r.fail(node, key, expected);  // the list itself, not its name
  return split;
}

// `parallel:`: the job around the pipeline (spec/transformer_model.h, ParallelConfig).
ParallelConfig read_parallel(const YamlReader& r, const YAML::Node& node, const TransformerModel& model) {
  r.expect_map(
      node, "parallel",
      {"tensor", "context", "data", "expert", "expert_tensor", "expert_dispatch", "zero", "sequence_parallel",
       "distributed_optimizer", "gpus_per_node", "rank_order", "overlap_weight_gather", "overlap_grad_reduce",
       "overlap_tensor_comm", "gradient_reduce_dtype"});
  ParallelConfig p;
  if (node["tensor"]) p.tensor = r.get_int(node["tensor"], "parallel.tensor", 1);
  if (node["context"]) p.context = r.get_int(node["context"], "parallel.context", 1);
  if (node["data"]) p.data = r.get_int(node["data"], "parallel.data", 1);
  if (node["expert"]) p.expert = r.get_int(node["expert"], "parallel.expert", 1);
  if (node["expert_tensor"]) p.expert_tensor = r.get_int(node["expert_tensor"], "parallel.expert_tensor", 1);
  if (node["expert_dispatch"]) {
    p.deepep_dispatch =
        r.get_choice(node["expert_dispatch"], "parallel.expert_dispatch", {"all-to-all", "deepep"},
                     "all-to-all (every routed copy: Megatron's alltoall dispatcher) or deepep (a "
                     "token once per node: DeepEP)") == "deepep";
  }
  if (node["zero"]) {
    p.zero = r.get_int(node["zero"], "parallel.zero", 0);
    if (p.zero > 3) r.fail(node["zero"], "parallel.zero", "0, 1, 2 or 3");
  }
  // Megatron's distributed optimizer shards the optimizer state over the data-parallel ranks: ZeRO-1.
  if (node["distributed_optimizer"] &&
      r.get_bool(node["distributed_optimizer"], "parallel.distributed_optimizer"))
    p.zero = std::max(p.zero, 1);
  if (node["sequence_parallel"])
    p.sequence_parallel = r.get_bool(node["sequence_parallel"], "parallel.sequence_parallel");
  if (node["gpus_per_node"]) p.gpus_per_node = r.get_int(node["gpus_per_node"], "parallel.gpus_per_node", 1);
  if (node["overlap_weight_gather"])
    p.overlap_weight_gather = r.get_bool(node["overlap_weight_gather"], "parallel.overlap_weight_gather");
  if (node["overlap_grad_reduce"])
    p.overlap_grad_reduce = r.get_bool(node["overlap_grad_reduce"], "parallel.overlap_grad_reduce");
  if (node["gradient_reduce_dtype"]) {
    p.gradient_reduce_dtype = r.get_choice(node["gradient_reduce_dtype"], "parallel.gradient_reduce_dtype",
                                           {"fp32", "bf16", "fp16"});
  }
  if (node["overlap_tensor_comm"])
    p.overlap_tensor_comm = r.get_bool(node["overlap_tensor_comm"], "parallel.overlap_tensor_comm");
  if (node["rank_order"]) {
    p.pipeline_before_data =
        r.get_choice(
            node["rank_order"], "parallel.rank_order", {"tp-dp-pp", "tp-pp-dp"},
            "'tp-dp-pp' (Megatron's default: data-parallel groups inside pipeline ranks) or 'tp-pp-dp'") ==
        "tp-pp-dp";
  }
  // Megatron splits heads and key/value groups over the tensor ranks: both must divide.
  if (p.tensor > 1 && model.heads % p.tensor != 0) {
    r.fail(node["tensor"], "parallel.tensor", fmt::format("a divisor of model.heads ({})", model.heads));
  }
  if (p.tensor > 1 && model.key_value_heads() % p.tensor != 0) {
    r.fail(
        node["tensor"], "parallel.tensor",
        fmt::format("a divisor of model.kv_heads ({}; Megatron splits the key/value groups over the tensor "
                    "ranks)",
                    model.key_value_heads()));
  }
  if (const std::string needed = context_parallel_requirement(model, p.context); !needed.empty()) {
    r.fail(node["context"], "parallel.context", needed);
  }
  if (const std::string needed = expert_parallel_requirement(model, p); !needed.empty()) {
    r.fail(node["expert"] ? node["expert"] : node["expert_tensor"], "parallel.expert", needed);
  }
  if (p.sequence_parallel && p.tensor == 1)
    r.fail(node["sequence_parallel"], "parallel.sequence_parallel",
           "tensor parallelism (parallel.tensor > 1)");
  if (p.zero > 0 && p.weight_replicas() == 1)
    r.fail(node["zero"] ? node["zero"] : node, "parallel.zero", "parallel.data or parallel.context > 1");
  return p;
}

TransformerSetup read_transformer_setup(const YamlReader& r, const YAML::Node& root) {
  TransformerSetup setup;
  setup.model = read_model(r, root["model"]);
  if (!root["hardware"])
    r.fail(root, "hardware", "{profile: NAME} with model: (the hardware to predict times for)");
  setup.profile = read_hardware(r, root["hardware"]);
  setup.profile.gemm_table(setup.model.dtype);  // fails now, naming the profile, if it lacks the dtype
  if (const YAML::Node split = root["pipeline"][kLayerSplitKey]) {
    setup.split = read_layer_split(r, split, "pipeline.layer_split", setup.stage_layers);
  }
  if (root["parallel"]) setup.parallel = read_parallel(r, root["parallel"], setup.model);
  const YAML::Node optimizer = root["optimizer"];
  if (optimizer && optimizer.IsMap()) {
    if (const YAML::Node type = optimizer[kOptimizerTypeKey]) {
      read_choice(r, type, "optimizer.type", optimizer_names(), "adamw, sgd, nadam, muon, lion, adan or soap",
                  setup.optimizer.type);
    }
    if (const YAML::Node state = optimizer[kOptimizerStateKey]) {
      setup.optimizer.state_bytes_per_param = r.get_double(state, "optimizer.state_bytes_per_param", 0);
      // AdamW keeps 12 bytes, Adan 20; a thousand is already far beyond any optimizer.
      if (setup.optimizer.state_bytes_per_param > 1024)
        r.fail(state, "optimizer.state_bytes_per_param",
               "bytes of state per parameter, at most 1024 (AdamW: 12)");
    }
    if (const YAML::Node frequency = optimizer[kOptimizerPreconditionKey]) {
      if (setup.optimizer.type != OptimizerKind::kSoap)
        r.fail(frequency, "optimizer.precondition_frequency", "soap only (its steps between eigenbases)");
      setup.optimizer.precondition_frequency = r.get_int(frequency, "optimizer.precondition_frequency", 1);
    }
  }
  return setup;
}

void reject_transformer_keys(const YamlReader& r, const YAML::Node& root) {
  const char* why =
      "nothing here: it applies to transformer scenarios (model: and hardware: instead of costs:)";
  if (root["hardware"]) r.fail(root["hardware"], "hardware", why);
  if (root["parallel"]) r.fail(root["parallel"], "parallel", why);
  if (root["pipeline"] && root["pipeline"].IsMap() && root["pipeline"][kLayerSplitKey]) {
    r.fail(root["pipeline"][kLayerSplitKey], "pipeline.layer_split", why);
  }
  const YAML::Node optimizer = root["optimizer"];
  if (optimizer && optimizer.IsMap()) {
    for (const char* key : {kOptimizerTypeKey, kOptimizerStateKey, kOptimizerPreconditionKey}) {
      if (optimizer[key]) r.fail(optimizer[key], std::string("optimizer.") + key, why);
    }
  }
}

}  // namespace pipesim
