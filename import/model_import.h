#pragma once
// A model described by another tool's file or arguments (Hugging Face's config.json, Megatron-LM's command
// line), as the scenario's `model:` section reads it, with an account of every key: what was read into which
// field, what was assumed, and what was ignored, cannot be modelled, or is unknown. `pipesim import` writes
// the account into the scenario's comments, so nothing is dropped silently.
#include <string>
#include <vector>

#include "spec/transformer_model.h"

namespace pipesim {

struct ModelImport {
  TransformerModel model;
  std::string model_type;                // "llama", "gpt2", ... ("" when the file has none)
  std::string architecture;              // the first of `architectures`, e.g. "LlamaForCausalLM"
  std::vector<std::string> read;         // "num_hidden_layers: 32 -> layers", one per value taken
  std::vector<std::string> assumed;      // defaults the file left to Hugging Face or to pipesim, and why
  std::vector<std::string> ignored;      // keys that change no figure pipesim computes
  std::vector<std::string> unsupported;  // "key: value (why the figures do not account for it)"
  std::vector<std::string> unknown;      // keys pipesim does not know
  std::vector<std::string>
      consulted;            // every key the reader looked up, present or not (its key table's test)
  ParallelConfig parallel;  // the job around the pipeline, as far as the file says
};

}  // namespace pipesim
