#pragma once
// Megatron-LM's command line (pretrain_gpt.py's arguments) read as a scenario's model and pipeline
// (`pipesim import megatron -- ARGS...`).
// What each argument becomes is the key table below (import/megatron_argument_keys.cpp): the model (with
// Megatron's defaults where an argument is absent), the pipeline (stages, interleaving, uneven stages as
// import/megatron_layout.h reads them, m from the batch sizes and the launch's data-parallel size, which
// pipesim is given), the job's parallel: section, features the costs do not model yet as refused model keys;
// what pipesim cannot model is listed as not supported, training and data arguments as ignored, anything else
// as unknown (or, near a listed one, refused as a typo).
#include <optional>
#include <string>
#include <vector>

#include "import/import_keys.h"
#include "import/model_import.h"

namespace pipesim {

struct MegatronImport {
  ModelImport imported;  // the model and the account of every argument
  int pipeline_stages = 1;
  int chunks = 1;  // virtual pipeline stages per device (1: plain 1F1B)
  int micro_batch = 1;
  int global_batch = 0;  // sequences per step over all data-parallel replicas; 0: not given
  int tensor_parallel = 1;
  // Layers per virtual stage in model order (pipeline_stages x chunks of them) when the arguments lay the
  // stages out unevenly (--decoder-first/last-pipeline-num-layers, --account-for-embedding/loss-in-pipeline-
  // split, --pipeline-model-parallel-layout); empty: even.
  std::vector<int> stage_layers;
};

// Megatron's uneven stages: `first` and `last` layers (0: not given) on the first and last pipeline rank,
// the rest equally over the middle ranks; with v chunks each rank's layers split equally over its chunks.
// With `embedding`/`loss` (and no first/last) the embedding and the loss count as one layer each. Throws
// InputError naming the argument when a share does not divide.
std::vector<int> megatron_stage_layers(int layers, int stages, int chunks, int first, int last,
                                       bool embedding, bool loss);

// Every argument the reader looks up or sorts, with what it becomes (`pipesim import megatron --help`,
// --keys).
const ImportKeyTable& megatron_argument_keys();

// Throws InputError naming the argument and what was expected. `vocab` stands in for a tokenizer's vocabulary
// when the arguments give no --vocab-size.
// An unknown argument within a typo of a known one is a UsageError with a did-you-mean (Megatron's argparse
// refuses it) unless `lenient`, which lists it as unknown.
MegatronImport read_megatron_args(const std::vector<std::string>& args,
                                  std::optional<int> vocab = std::nullopt, bool lenient = false);

}  // namespace pipesim
