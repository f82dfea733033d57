#include "spec/unmodelled_features.h"

#include <fmt/format.h>

namespace pipesim {
std::vector<UnmodelledFeature> unmodelled_in_force(const UnmodelledFeatures& f, int seq_len) {
  std::vector<UnmodelledFeature> out;
  const auto add = [&](const std::string& key, std::string what, std::string stand_in) {
    const auto at = f.where.find(key);
    out.push_back({key, std::move(what), std::move(stand_in), at == f.where.end() ? "" : at->second});
  };
  if (f.sliding_window > 0 && f.sliding_window < seq_len) {
    add("model.sliding_window",
        fmt::format("sliding-window attention ({} of the {} tokens)", f.sliding_window, seq_len),
        "attention over the whole sequence");
  }
  if (f.attention_chunk > 0 && f.attention_chunk < seq_len) {
    add("model.attention_chunk",
        fmt::format("chunked attention (chunks of {} of the {} tokens)", f.attention_chunk, seq_len),
        "attention over the whole sequence");
  }
  return out;
}

std::vector<std::string> unmodelled_lines(const std::vector<UnmodelledFeature>& features) {
  std::vector<std::string> lines;
  for (const UnmodelledFeature& f : features)
    lines.push_back(f.key + ": " + f.what + ", priced as " + f.stand_in);
  return lines;
}

}  // namespace pipesim
