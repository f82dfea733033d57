#include "api/zb_model_scenario.h"

#include <fmt/format.h>

namespace pipesim {

Scenario zb_model_scenario(const ZbModel& m, int microbatches, const std::string& profile, int batches) {
  const TransformerModel& t = m.model;
  const std::string yaml = fmt::format(
      "name: zb-{}-N{}-m{}\n"
      "model: {{layers: {}, hidden: {}, heads: {}, seq_len: {}, vocab: {}, attention: {}, dropout: {}}}\n"
      "hardware: {{profile: {}}}\n"
      "pipeline: {{stages: {}, microbatches: {}, microbatch_size: {}, layer_split: zb, batches: {}}}\n"
      "optimizer: {{type: adamw}}\n",
      m.name, m.stages, microbatches, t.layers, t.hidden, t.heads, t.seq_len, t.vocab,
      attention_name(t.attention), t.dropout ? "true" : "false", profile, m.stages, microbatches,
      m.microbatch_size, batches);
  return parse_scenario(yaml, fmt::format("zb_models.csv:{}", m.name));
}

}  // namespace pipesim
