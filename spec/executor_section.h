#pragma once
// The scenario's `executor:` section: what `pipesim execute` trains (model, data set, sizes, optimizer
// settings). Every key is optional; unset keys keep the executor's defaults (README.md, executor/README.md).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipesim {

struct ExecutorSection {
  std::optional<std::string> model;  // residual_mlp | gpt
  std::optional<std::string> data;   // teacher | fashion_mnist | austen | fortunes | snippet
  std::optional<int> width;
  std::optional<int> blocks;
  std::optional<int> heads;
  std::optional<int> context;          // characters per sample (token input)
  std::optional<int> embedding_width;  // residual_mlp with a text corpus: per-character embedding width
  std::optional<int> samples;          // per microbatch
  std::optional<double> learning_rate;
  std::optional<std::int64_t> seed;
  // Keys set in `other` replace this one's (command-line flags over the scenario).
  void overlay(const ExecutorSection& other);
};

const std::vector<std::string>& executor_model_names();
const std::vector<std::string>& executor_data_names();
bool is_text_corpus(const std::string& data);

}  // namespace pipesim
