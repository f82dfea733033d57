#pragma once
// A Hugging Face model's config.json read as the scenario's `model:` section (`pipesim import hf`).
// What each key becomes is the key table below (import/hf_config_keys.cpp): the model's sizes under the
// Llama family's names, GPT-2's and others', features the costs do not model yet as the refused model keys,
// other towers as not supported, and what changes no figure as ignored; any other key is listed as unknown.
// The MLP is gated (swiglu) for a gated activation or family, gelu otherwise; dropout when any *dropout or
// *pdrop key is above 0.
#include <optional>
#include <string>
#include <vector>

#include "import/import_keys.h"
#include "import/model_import.h"

namespace pipesim {

// Every key the reader looks up or sorts, with what it becomes (`pipesim import hf --help` and --keys).
const ImportKeyTable& hf_config_keys();

// Throws InputError naming `source`, the line and column of a JSON syntax error, or the key and what was
// expected. `seq_len` overrides the model's maximum context.
ModelImport read_hf_config(const std::string& json_text, const std::string& source,
                           std::optional<int> seq_len = std::nullopt);

// The sequence length without --seq-len: a common pretraining length, or the model's longest context where
// that is shorter.
inline constexpr int kDefaultImportSeqLen = 4096;

}  // namespace pipesim
