#include "executor/optim/optimizer_config.h"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <utility>
#include <vector>

#include "base/name_table.h"

namespace pipesim::executor {
namespace {

const NameTable<DelayCorrection>& correction_names() {
  static const NameTable<DelayCorrection> names{{"none", DelayCorrection::kNone},
                                                {"error-feedback", DelayCorrection::kErrorFeedback},
                                                {"weight-prediction", DelayCorrection::kWeightPrediction}};
  return names;
}

// The value `text` names in `table`; std::invalid_argument listing every name otherwise.
template <typename Enum>
Enum parse_in(const NameTable<Enum>& table, const std::string& text, const char* what) {
  for (const auto& [name, value] : table) {
    if (name == text) return value;
  }
  std::string allowed;
  for (const std::string& name : names_of(table)) allowed += (allowed.empty() ? "" : ", ") + name;
  throw std::invalid_argument(std::string("unknown ") + what + " '" + text + "' (allowed: " + allowed + ")");
}

}  // namespace

float LrSchedule::at(float peak, std::int64_t applied_microbatches) const {
  if (total_microbatches <= 0) return peak;
  const double progress = std::min(1.0, static_cast<double>(applied_microbatches) / total_microbatches);
  if (progress < warmup_fraction) return static_cast<float>(peak * progress / warmup_fraction);
  const double span = 1.0 - warmup_fraction;
  const double decay = span <= 0 ? 1.0 : (progress - warmup_fraction) / span;
  const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * decay));
  return static_cast<float>(peak * (floor_ratio + (1.0 - floor_ratio) * cosine));
}

OptimizerConfig optimizer_with_defaults(OptimizerKind kind) {
  OptimizerConfig config;
  config.kind = kind;
  if (kind == OptimizerKind::kMuon) config.momentum = 0.95F;
  if (kind == OptimizerKind::kLion) config.beta2 = 0.99F;
  if (kind == OptimizerKind::kSoap) config.beta1 = 0.95F;  // beta2 0.95, as AdamW's
  if (kind == OptimizerKind::kAdan) {
    config.beta1 = 0.98F;
    config.beta2 = 0.92F;
  }
  return config;
}

OptimizerKind parse_optimizer_kind(const std::string& name) {
  return parse_in(optimizer_names(), name, "optimizer");
}
std::string optimizer_kind_name(OptimizerKind kind) {
  return optimizer_name(kind);
}
std::vector<std::string> optimizer_kind_names() {
  return names_of(optimizer_names());
}
std::vector<std::string> delay_correction_names() {
  return names_of(correction_names());
}
DelayCorrection parse_delay_correction(const std::string& name) {
  return parse_in(correction_names(), name, "correction");
}
std::string delay_correction_name(DelayCorrection correction) {
  return name_in(correction_names(), correction);
}

}  // namespace pipesim::executor
