#pragma once
// A torchtitan job file (TOML) read as a scenario's model and pipeline (`pipesim import torchtitan`).
//
// [model] name and flavor name the model: its dimensions come from the table of torchtitan's Llama 3 flavors
// below (8B, 70B, 405B, with torchtitan's FFN rule: 4h, x 2/3, x ffn_dim_multiplier, rounded up to
// multiple_of; Llama 3's 128256-token vocabulary, untied), or from a Hugging Face config.json given instead.
// [training] local_batch_size (sequences per data-parallel rank and step), seq_len, mixed_precision_param.
// [parallelism] pipeline_parallel_degree (stages), pipeline_parallel_schedule (PyTorch's class name: 1F1B,
// Interleaved1F1B, ZBVZeroBubble, ...), pipeline_parallel_layers_per_stage (stages per rank, else 1 for a
// single-stage schedule and 2 for a looped one, as torchtitan chooses), pipeline_parallel_microbatch_size
// (b; m = local_batch_size / b; the older pipeline_parallel_microbatches gives m),
// first/last_stage_less_layers (1 and 1, torchtitan's defaults, is pipesim's `zb` split for one stage per
// rank). [activation_checkpoint] mode: none, full, selective (op: the attention core, pipesim's selective).
// Tensor and context parallelism and FSDP shards go to the parallel: section; float8 converters to model.fp8
// (refused until modelled); expert parallelism and async tensor parallelism are listed as not supported,
// the training loop's keys as ignored, anything else as unknown: the key table below
// (import/torchtitan_keys.cpp) says what each key becomes.
#include <optional>
#include <string>
#include <vector>

#include "import/import_keys.h"
#include "import/model_import.h"

namespace pipesim {

struct TorchtitanImport {
  ModelImport imported;
  int pipeline_stages = 1;
  std::string schedule;  // the registered schedule, e.g. "interleaved-1f1b"
  int chunks = 1;        // stages per rank
  int microbatches = 1;  // m per pipeline replica
  int local_batch = 1;   // sequences per pipeline replica and step (B)
  // Layers per virtual stage in model order (pipeline_stages x chunks), as torchtitan splits them with its
  // first/last-stage-less-layers weights; empty for one stage.
  std::vector<int> stage_layers;
};

// torchtitan's split of `layers` over `stages` (virtual) stages: the embedding counts as `input_weight`
// layers and the norm and output layer as `output_weight`; the remainder of (layers + both weights) over the
// stages goes to the first stages; the last takes what is left. Throws InputError as torchtitan refuses.
std::vector<int> torchtitan_stage_layers(int layers, int stages, int input_weight, int output_weight);

// Every section.key the reader looks up or sorts, with what it becomes (`pipesim import torchtitan --help`,
// --keys).
const ImportKeyTable& torchtitan_keys();

// Throws InputError with the file, line and column of a TOML error, or the key and what was expected.
// `model` replaces the flavor table (a Hugging Face config.json read by import/hf_config.h).
TorchtitanImport read_torchtitan_config(const std::string& toml_text, const std::string& source,
                                        const std::optional<ModelImport>& model = std::nullopt);

}  // namespace pipesim
