#include "io/executor_section.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "io/yaml_reader.h"

namespace pipesim {
ExecutorSection read_executor_section(const YamlReader& r, const YAML::Node& node) {
  r.expect_map(node, "executor",
               {"model", "data", "width", "blocks", "heads", "context", "embedding_width", "samples",
                "learning_rate", "seed"});
  ExecutorSection s;
  if (node["model"]) s.model = r.get_choice(node["model"], "executor.model", executor_model_names());
  if (node["data"]) s.data = r.get_choice(node["data"], "executor.data", executor_data_names());
  if (node["width"]) s.width = r.get_int(node["width"], "executor.width", 1);
  if (node["blocks"]) s.blocks = r.get_int(node["blocks"], "executor.blocks", 0);
  if (node["heads"]) s.heads = r.get_int(node["heads"], "executor.heads", 1);
  if (node["context"]) s.context = r.get_int(node["context"], "executor.context", 1);
  if (node["embedding_width"])
    s.embedding_width = r.get_int(node["embedding_width"], "executor.embedding_width", 1);
  if (node["samples"]) s.samples = r.get_int(node["samples"], "executor.samples", 1);
  if (node["learning_rate"])
    s.learning_rate = r.get_double(node["learning_rate"], "executor.learning_rate", 0);
  if (node["seed"]) s.seed = r.get_int(node["seed"], "executor.seed", 0);
  const bool gpt = s.model.value_or("residual_mlp") == "gpt";
  if (gpt && !is_text_corpus(s.data.value_or("teacher"))) {
    r.fail(node["data"] ? node["data"] : node, "executor.data",
           "a text corpus ('austen', 'fortunes' or 'snippet') for model 'gpt'");
  }
  if (gpt && s.width.value_or(16) % s.heads.value_or(2) != 0) {
    r.fail(node["heads"] ? node["heads"] : node["width"], "executor.heads", "a divisor of executor.width");
  }
  if (s.width && *s.width > 4096) r.fail(node["width"], "executor.width", "an integer in [1, 4096]");
  if (s.context && *s.context > 4096) r.fail(node["context"], "executor.context", "an integer in [1, 4096]");
  return s;
}

}  // namespace pipesim
