#pragma once
// Megatron-LM's command line (pretrain_gpt.py's arguments) read as a scenario's model and pipeline
// (`pipesim import megatron -- ARGS...`).
//
// Model: --num-layers, --hidden-size, --ffn-hidden-size (Megatron's default: 4h, or with --swiglu
// int(4h * 2/3 / 64) * 64), --num-attention-heads, --group-query-attention with --num-query-groups,
// --seq-length, --vocab-size (padded as Megatron pads it: up to a multiple of --make-vocab-size-divisible-by,
// default 128, times the tensor-parallel size), --swiglu, --untie-embeddings-and-output-weights,
// --bf16/--fp16,
// --attention-dropout/--hidden-dropout (Megatron's default 0.1 each), --recompute-granularity.
// Pipeline: --pipeline-model-parallel-size (stages), --virtual-pipeline-model-parallel-size or
// --num-layers-per-virtual-pipeline-stage (interleaved chunks), uneven stages (--decoder-first/last-pipeline-
// num-layers, --account-for-embedding/loss-in-pipeline-split, or a --pipeline-model-parallel-layout string:
// io/megatron_layout.h), --micro-batch-size and --global-batch-size (m = global / (micro x data-parallel
// size); the data-parallel size is the launcher's, so it is given to pipesim).
// Job: --tensor-model-parallel-size, --context-parallel-size, --sequence-parallel,
// --use-distributed-optimizer. What pipesim cannot model (experts, overlapped tensor-parallel communication,
// ...) is listed as unsupported with its value; training and data arguments (learning rate, paths, logging)
// are listed as ignored; anything else as unknown.
#include <optional>
#include <string>
#include <vector>

#include "io/model_import.h"

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

// Throws InputError naming the argument and what was expected. `vocab` stands in for a tokenizer's vocabulary
// when the arguments give no --vocab-size.
// An unknown argument within a typo of a known one is a UsageError with a did-you-mean (Megatron's argparse
// refuses it) unless `lenient`, which lists it as unknown.
MegatronImport read_megatron_args(const std::vector<std::string>& args,
                                  std::optional<int> vocab = std::nullopt, bool lenient = false);

}  // namespace pipesim
