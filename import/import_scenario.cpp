#include "import/import_scenario.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string_view>

#include "base/errors.h"
#include "io/hardware_profile_reader.h"
#include "io/scenario.h"

namespace pipesim {
namespace {

// A list of lines as comments under a heading; nothing when empty.
std::string comment_block(const std::string& heading, const std::vector<std::string>& lines) {
  if (lines.empty()) return "";
  std::string out = "# " + heading + "\n";
  for (const std::string& line : lines) out += "#   " + line + "\n";
  return out;
}

// Names joined into comment lines of at most ~100 characters.
std::vector<std::string> wrapped(const std::vector<std::string>& names) {
  std::vector<std::string> lines(1);
  for (const std::string& name : names) {
    if (!lines.back().empty() && lines.back().size() + name.size() > 100) lines.emplace_back();
    lines.back() += (lines.back().empty() ? "" : ", ") + name;
  }
  return names.empty() ? std::vector<std::string>{} : lines;
}

// A mixture of experts as the model section's key.
std::string moe_yaml(const MixtureOfExperts& e) {
  if (!e.any()) return "";
  std::string text =
      fmt::format("  moe: {{experts: {}, experts_per_token: {}", e.experts, e.experts_per_token);
  if (e.shared_experts > 0) text += fmt::format(", shared_experts: {}", e.shared_experts);
  if (e.expert_ffn_hidden > 0) text += fmt::format(", expert_ffn_hidden: {}", e.expert_ffn_hidden);
  if (e.dense_layers > 0) text += fmt::format(", dense_layers: {}", e.dense_layers);
  if (e.layer_step > 1) text += fmt::format(", layer_step: {}", e.layer_step);
  return text + "}\n";
}

// Latent attention as the model section's key (DeepSeek's names).
std::string mla_yaml(const LatentAttention& a) {
  if (!a.any()) return "";
  return fmt::format(
      "  mla: {{kv_lora_rank: {}, q_lora_rank: {}, qk_nope_head_dim: {}, qk_rope_head_dim: {}, v_head_dim: "
      "{}}}\n",
      a.kv_lora_rank, a.q_lora_rank, a.qk_nope_head_dim, a.qk_rope_head_dim, a.v_head_dim);
}

// The features the costs do not represent yet, as the model section's keys: `pipesim run` refuses the
// scenario until they are modelled (or, with --allow-unmodelled, banners every figure).
std::string unmodelled_yaml(const UnmodelledFeatures& f) {
  std::string text;
  if (f.sliding_window > 0) text += fmt::format("  sliding_window: {}\n", f.sliding_window);
  if (f.attention_chunk > 0) text += fmt::format("  attention_chunk: {}\n", f.attention_chunk);
  if (text.empty()) return "";
  return "  # Not modelled yet: `pipesim run` and `plan` refuse these (--allow-unmodelled prices the dense\n"
         "  # stand-in, every figure saying so).\n" +
         text;
}

// The profile, and the reserve where the profile states a capacity that leaves room for it.
std::string hardware_yaml(const ImportSettings& settings) {
  double capacity_gb = 0;
  try {
    capacity_gb = load_hardware_profile(resolve_profile_path(settings.profile)).memory_capacity_gb;
  } catch (const InputError&) {
    // The read-back below names the profile that does not read.
  }
  if (settings.reserve_gb > 0 && capacity_gb > 2 * settings.reserve_gb) {
    return fmt::format(
        "hardware: {{profile: {}, reserve_gb: {:g}}}  # reserve: GiB a run cannot use (CUDA context, NCCL "
        "buffers, fragmentation)\n",
        settings.profile, settings.reserve_gb);
  }
  return fmt::format("hardware: {{profile: {}}}\n", settings.profile);
}

// Characters a plain YAML scalar may hold anywhere without changing how it reads.
bool plain_yaml_scalar(const std::string& value) {
  if (value.empty() || value == "~" || value == "null" || value == "Null" || value == "NULL") return false;
  return std::all_of(value.begin(), value.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) ||
           std::string_view("._()=+-").find(c) != std::string_view::npos;
  });
}

}  // namespace

std::string imported_name_line(const std::string& name) {
  if (plain_yaml_scalar(name)) return fmt::format("name: {}\n", name);
  std::string quoted = "\"";
  for (const char c : name) {
    if (c == '"' || c == '\\') {
      quoted += {'\\', c};
    } else if (static_cast<unsigned char>(c) < 0x20) {
      quoted += fmt::format("\\x{:02x}", static_cast<unsigned char>(c));
    } else {
      quoted += c;  // UTF-8 bytes as they are (the reader checks the text is valid)
    }
  }
  return fmt::format("name: {}\"\n", quoted);
}

void expect_imported_scenario_reads_back(const std::string& text, const std::string& what) {
  try {
    (void)parse_scenario(text, "the imported scenario");
  } catch (const InputError& e) {
    throw InputError(fmt::format("{} does not read back: {}", what, e.what()));
  }
}

std::string scenario_from_import(const ModelImport& imported, const ImportSettings& settings) {
  // Found before anything is written, and named with its option (the read-back would name the text).
  try {
    (void)resolve_profile_path(settings.profile);
  } catch (const InputError& e) {
    throw InputError(fmt::format("--profile {}: {}", settings.profile, e.what()));
  }
  const TransformerModel& m = imported.model;
  if (settings.stages > m.layers) {
    throw InputError(fmt::format("{} pipeline stages for {} layers: every stage needs at least one layer",
                                 settings.stages, m.layers));
  }
  std::string text = fmt::format("# Written by `{}`", settings.origin);
  if (!imported.model_type.empty() || !imported.architecture.empty()) {
    text += fmt::format(" (model_type {}{}{})", imported.model_type.empty() ? "?" : imported.model_type,
                        imported.architecture.empty() ? "" : ", ", imported.architecture);
  }
  text += ".\n";
  text += comment_block("Read:", imported.read);
  text += comment_block("Assumed:", imported.assumed);
  text += comment_block("NOT SUPPORTED (the figures do not account for these):", imported.unsupported);
  text += comment_block("Ignored (they change no figure pipesim computes):", wrapped(imported.ignored));
  text += comment_block("Unknown to pipesim, not read:", wrapped(imported.unknown));
  text += comment_block("Pipeline:", settings.pipeline_notes);
  text += settings.pipeline_from_options
              ? "# The hardware, pipeline, optimizer and schedules below are the importer's choices (its "
                "options),\n"
                "# not the file's: edit them.\n"
              : "# The hardware and optimizer below are the importer's choices (its options): edit them.\n";
  text += imported_name_line(settings.name);
  text += "model:\n";
  text += fmt::format("  layers: {}\n  hidden: {}\n  heads: {}\n", m.layers, m.hidden, m.heads);
  if (m.kv_heads > 0) text += fmt::format("  kv_heads: {}\n", m.kv_heads);
  if (m.ffn_hidden > 0) text += fmt::format("  ffn_hidden: {}\n", m.ffn_hidden);
  text += fmt::format("  mlp: {}\n", name_in(mlp_names(), m.mlp));
  if (m.norm != NormKind::kLayerNorm) text += fmt::format("  norm: {}\n", name_in(norm_names(), m.norm));
  text += fmt::format("  seq_len: {}\n  vocab: {}\n  tied_embeddings: {}\n  dtype: {}\n", m.seq_len, m.vocab,
                      m.tied_embeddings, m.dtype);
  if (m.dropout) text += "  dropout: true\n";
  text += fmt::format("  attention: {}\n  recompute: {}\n", name_in(attention_names(), m.attention),
                      name_in(recompute_names(), m.recompute));
  if (m.head_dim > 0) text += fmt::format("  head_dim: {}\n", m.head_dim);
  text += moe_yaml(m.moe);
  text += mla_yaml(m.mla);
  if (m.mtp_layers > 0) text += fmt::format("  mtp_layers: {}\n", m.mtp_layers);
  if (m.fp8 != Fp8Recipe::kNone) text += fmt::format("  fp8: {}\n", fp8_recipe_name(m.fp8));
  text += unmodelled_yaml(m.unmodelled);
  text += hardware_yaml(settings);
  const int global_batch = settings.global_batch > 0 ? settings.global_batch : settings.microbatches;
  text += fmt::format("pipeline: {{stages: {}, microbatches: {}, global_batch: {}{}}}\n", settings.stages,
                      settings.microbatches, global_batch,
                      settings.layer_split.empty() ? "" : ", layer_split: " + settings.layer_split);
  const ParallelConfig& p = imported.parallel;
  if (p.any() || p.expert > 1) {  // the experts' parallelism is the job's even on one data rank
    std::string parallel = fmt::format("parallel: {{tensor: {}, data: {}", p.tensor, p.data);
    if (p.context > 1) parallel += fmt::format(", context: {}", p.context);
    if (p.expert > 1) parallel += fmt::format(", expert: {}", p.expert);
    if (p.expert_tensor > 0) parallel += fmt::format(", expert_tensor: {}", p.expert_tensor);
    if (p.deepep_dispatch) parallel += ", expert_dispatch: deepep";
    if (p.zero > 0 && p.weight_replicas() > 1) parallel += fmt::format(", zero: {}", p.zero);
    if (p.sequence_parallel) parallel += ", sequence_parallel: true";
    if (!p.overlap_grad_reduce && p.weight_replicas() > 1) parallel += ", overlap_grad_reduce: false";
    if (p.overlap_tensor_comm && p.tensor > 1) parallel += ", overlap_tensor_comm: true";
    if (!p.gradient_reduce_dtype.empty() && p.weight_replicas() > 1)
      parallel += ", gradient_reduce_dtype: " + p.gradient_reduce_dtype;
    text += parallel + "}\n";
  }
  text += "optimizer: {type: adamw}\n";
  text += fmt::format("schedules: {}\n", settings.schedules);
  // What it writes must read back as the scenario it describes.
  expect_imported_scenario_reads_back(text, "the imported scenario");
  return text;
}

}  // namespace pipesim
