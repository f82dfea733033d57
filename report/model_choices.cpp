#include "report/model_choices.h"

#include <fmt/format.h>

namespace pipesim {

std::string model_choices_text(const TransformerModel& t) {
  const std::string heads = t.key_value_heads() == t.heads
                                ? "multi-head attention"
                                : fmt::format("{} key/value heads of {}", t.key_value_heads(), t.heads);
  const std::string head_size =
      t.head_dim > 0 && t.head_dim * t.heads != t.hidden ? fmt::format(", heads {} wide", t.head_dim) : "";
  return fmt::format("{}{} attention ({}{}), {} MLP (f = {}), {}recomputation: {}{}",
                     t.attention == AttentionKind::kFlash && t.causal ? "causal " : "",
                     attention_name(t.attention), heads, head_size,
                     t.mlp == MlpKind::kSwiglu ? "SwiGLU" : "GeLU", t.ffn(), t.dropout ? "dropout, " : "",
                     recompute_name(t.recompute), t.tied_embeddings ? ", tied embeddings" : "");
}

}  // namespace pipesim
