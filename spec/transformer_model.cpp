#include "spec/transformer_model.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "base/errors.h"

namespace pipesim {

int dtype_bytes(const std::string& dtype) {
  if (dtype == "bf16" || dtype == "fp16") return 2;
  if (dtype == "fp32") return 4;
  throw InputError(fmt::format("dtype '{}': expected bf16, fp16 or fp32", dtype));
}

int TransformerModel::ffn() const {
  if (ffn_hidden > 0) return ffn_hidden;
  if (mlp == MlpKind::kGelu) return 4 * hidden;
  // Llama's rule: two thirds of 4h, rounded up to a multiple of 256 (4096 -> 11008).
  const long two_thirds = (8L * hidden + 2) / 3;
  return static_cast<int>((two_thirds + 255) / 256 * 256);
}

double MixtureOfExperts::routed_load() const {
  return capacity_factor > 0 ? std::min(load_imbalance, capacity_factor) : load_imbalance;
}

const NameTable<AttentionKind>& attention_names() {
  static const NameTable<AttentionKind> names = {{"flash", AttentionKind::kFlash},
                                                 {"eager", AttentionKind::kEager}};
  return names;
}

const NameTable<MlpKind>& mlp_names() {
  static const NameTable<MlpKind> names = {{"gelu", MlpKind::kGelu}, {"swiglu", MlpKind::kSwiglu}};
  return names;
}

const NameTable<NormKind>& norm_names() {
  static const NameTable<NormKind> names = {{"layernorm", NormKind::kLayerNorm},
                                            {"rmsnorm", NormKind::kRmsNorm}};
  return names;
}

int TransformerModel::norm_parameters() const {
  return norm == NormKind::kLayerNorm ? 2 * hidden : hidden;
}

const NameTable<Recompute>& recompute_names() {
  static const NameTable<Recompute> names = {{"none", Recompute::kNone},
                                             {"selective", Recompute::kSelective},
                                             {"full", Recompute::kFull},
                                             {"op", Recompute::kOp}};
  return names;
}

std::string attention_name(AttentionKind kind) {
  return name_in(attention_names(), kind);
}

std::string recompute_name(Recompute kind) {
  return name_in(recompute_names(), kind);
}

const NameTable<LayerSplit>& layer_split_names() {
  static const NameTable<LayerSplit> names = {{"even", LayerSplit::kEven},
                                              {"zb", LayerSplit::kZeroBubble},
                                              {"balanced", LayerSplit::kBalanced},
                                              {"explicit", LayerSplit::kExplicit}};
  return names;
}

std::string layer_split_name(LayerSplit split) {
  return name_in(layer_split_names(), split);
}

std::string layer_split_text(const TransformerSetup& setup) {
  if (setup.split != LayerSplit::kExplicit) return layer_split_name(setup.split);
  return fmt::format("[{}]", fmt::join(setup.stage_layers, ","));
}

}  // namespace pipesim
