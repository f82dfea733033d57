#include "spec/executor_section.h"

#include <algorithm>

namespace pipesim {
namespace {

template <typename T>
void take(std::optional<T>& into, const std::optional<T>& from) {
  if (from) into = from;
}

}  // namespace

void ExecutorSection::overlay(const ExecutorSection& other) {
  take(model, other.model);
  take(data, other.data);
  take(width, other.width);
  take(blocks, other.blocks);
  take(heads, other.heads);
  take(context, other.context);
  take(embedding_width, other.embedding_width);
  take(samples, other.samples);
  take(learning_rate, other.learning_rate);
  take(seed, other.seed);
}

const std::vector<std::string>& executor_model_names() {
  static const std::vector<std::string> names{"residual_mlp", "gpt"};
  return names;
}
const std::vector<std::string>& executor_data_names() {
  static const std::vector<std::string> names{"teacher", "fashion_mnist", "austen", "fortunes", "snippet"};
  return names;
}
bool is_text_corpus(const std::string& data) {
  return data == "austen" || data == "fortunes" || data == "snippet";
}

}  // namespace pipesim
