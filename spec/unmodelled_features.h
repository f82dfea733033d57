#pragma once
// Parts of today's models that the transformer cost equations do not represent yet: mixture of experts,
// multi-head latent attention, sliding-window or chunked attention in force, multi-token prediction and FP8
// GEMMs. A scenario keeps them as data (`model.moe`, `model.mla`, ...) so that a run refuses to price the
// dense model in their place, or says on every figure that it did (`--allow-unmodelled`): a figure for a
// model pipesim does not describe is never shown as if it were that model's.
#include <map>
#include <string>
#include <vector>

namespace pipesim {

struct MixtureOfExperts {
  int experts = 0;            // routed experts per MoE layer; 0: a dense model
  int experts_per_token = 0;  // top-k
  int shared_experts = 0;     // experts every token passes through
  int expert_ffn_hidden = 0;  // one expert's MLP width; 0: the model's ffn_hidden
  int dense_layers = 0;       // the first layers keep a dense MLP (DeepSeek's first_k_dense_replace)
};

struct LatentAttention {
  int kv_lora_rank = 0;  // the compressed key/value width; 0: no latent attention
  int q_lora_rank = 0;   // the compressed query width; 0: queries uncompressed
};

struct UnmodelledFeatures {
  MixtureOfExperts moe;
  LatentAttention mla;
  int sliding_window = 0;   // tokens a query attends to; in force only when shorter than the sequence
  int attention_chunk = 0;  // chunked attention's chunk (Llama 4); in force only when shorter than it
  int mtp_layers = 0;       // multi-token prediction modules after the last layer
  std::string fp8;          // the FP8 recipe of the GEMMs ("hybrid", "float8 converter"); "": none
  // The scenario key of each feature given -> where it was read ("file:line"), for the refusal's message.
  std::map<std::string, std::string> where;
};

struct UnmodelledFeature {
  std::string key;       // the scenario key, e.g. "model.moe"
  std::string what;      // "a mixture of experts (128 routed experts, 8 per token)"
  std::string stand_in;  // what the figures price instead: "one dense MLP per layer"
  std::string where;     // "file:12: key 'model.moe'", or "" when not read from a file
};

// The features in force for a sequence of `seq_len` tokens, in a fixed order (moe, mla, sliding_window,
// attention_chunk, mtp_layers, fp8).
std::vector<UnmodelledFeature> unmodelled_in_force(const UnmodelledFeatures& features, int seq_len);

// One line per feature: "model.moe: a mixture of experts (...), priced as one dense MLP per layer".
std::vector<std::string> unmodelled_lines(const std::vector<UnmodelledFeature>& features);

}  // namespace pipesim
