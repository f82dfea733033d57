#pragma once
// Parts of today's models that the transformer cost equations do not represent yet: sliding-window or
// chunked attention in force. A scenario keeps them as data
// (`model.sliding_window`, ...) so that a run refuses to price the dense model in their place, or says on
// every figure that it did (`--allow-unmodelled`): a figure for a model pipesim does not describe is never
// shown as if it were that model's.
#include <map>
#include <string>
#include <vector>

namespace pipesim {

struct UnmodelledFeatures {
  int sliding_window = 0;   // tokens a query attends to; in force only when shorter than the sequence
  int attention_chunk = 0;  // chunked attention's chunk (Llama 4); in force only when shorter than it
  // The scenario key of each feature given -> where it was read ("file:line"), for the refusal's message.
  std::map<std::string, std::string> where;
};

struct UnmodelledFeature {
  std::string key;       // the scenario key, e.g. "model.sliding_window"
  std::string what;      // "sliding-window attention (1024 of the 4096 tokens)"
  std::string stand_in;  // what the figures price instead: "attention over the whole sequence"
  std::string where;     // "file:12: key 'model.moe'", or "" when not read from a file
};

// The features in force for a sequence of `seq_len` tokens, in a fixed order (sliding_window,
// attention_chunk).
std::vector<UnmodelledFeature> unmodelled_in_force(const UnmodelledFeatures& features, int seq_len);

// One line per feature: "model.sliding_window: sliding-window attention (...), priced as attention over the
// whole sequence".
std::vector<std::string> unmodelled_lines(const std::vector<UnmodelledFeature>& features);

}  // namespace pipesim
