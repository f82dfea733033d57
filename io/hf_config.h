#pragma once
// A Hugging Face model's config.json read as the scenario's `model:` section (`pipesim import hf`).
//
// Keys read (the Llama family's names first, GPT-2's second): num_hidden_layers / n_layer -> layers,
// hidden_size / n_embd -> hidden, num_attention_heads / n_head -> heads, num_key_value_heads -> kv_heads,
// intermediate_size / n_inner -> ffn_hidden, vocab_size -> vocab, max_position_embeddings / n_positions ->
// seq_len (the model's longest context; a training run's shorter one is given on the command line),
// tie_word_embeddings -> tied_embeddings (Hugging Face's default, true, when absent), torch_dtype -> dtype.
// The MLP is gated (swiglu: three matrices) for a gated activation (hidden_act silu/swish, or a model_type of
// the Llama, Mistral, Qwen, Gemma families) and gelu (two matrices) otherwise. Dropout when any *dropout /
// *pdrop key is above 0. Every other key is sorted into what changes no figure pipesim computes (names,
// token ids, norms' epsilon, RoPE's base), what it cannot represent (mixture of experts, sliding windows, a
// head size other than hidden / heads) and keys it does not know; the importer lists all three.
#include <optional>
#include <string>
#include <vector>

#include "io/model_import.h"

namespace pipesim {

// Throws InputError naming `source`, the line and column of a JSON syntax error, or the key and what was
// expected. `seq_len` overrides the model's maximum context.
ModelImport read_hf_config(const std::string& json_text, const std::string& source,
                           std::optional<int> seq_len = std::nullopt);

// The sequence length without --seq-len: a common pretraining length, or the model's longest context where
// that is shorter.
inline constexpr int kDefaultImportSeqLen = 4096;

}  // namespace pipesim
