#include "executor/optim/optimizer_config.h"

#include <array>
#include <cmath>
#include <numbers>
#include <stdexcept>
#include <utility>
#include <vector>

namespace pipesim::executor {
namespace {

constexpr std::array kCorrectionNames{std::pair{DelayCorrection::kNone, "none"},
                                      std::pair{DelayCorrection::kErrorFeedback, "error-feedback"},
                                      std::pair{DelayCorrection::kWeightPrediction, "weight-prediction"}};

template <typename Enum, std::size_t N>
Enum parse_name(const std::array<std::pair<Enum, const char*>, N>& names, const std::string& text,
                const char* what) {
  std::string allowed;
  for (const auto& [value, name] : names) {
    if (text == name) return value;
    allowed += allowed.empty() ? name : std::string(", ") + name;
  }
  throw std::invalid_argument(std::string("unknown ") + what + " '" + text + "' (allowed: " + allowed + ")");
}

template <typename Enum, std::size_t N>
std::vector<std::string> names_in(const std::array<std::pair<Enum, const char*>, N>& names) {
  std::vector<std::string> out;
  for (const auto& entry : names) out.emplace_back(entry.second);
  return out;
}

template <typename Enum, std::size_t N>
std::string name_of(const std::array<std::pair<Enum, const char*>, N>& names, Enum value) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return "?";
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

OptimizerKind parse_optimizer_kind(const std::string& name) {
  for (const auto& [text, kind] : optimizer_names()) {
    if (text == name) return kind;
  }
  throw std::invalid_argument("unknown optimizer '" + name + "' (allowed: sgd, adamw, nadam, muon)");
}
std::string optimizer_kind_name(OptimizerKind kind) {
  return optimizer_name(kind);
}
std::vector<std::string> optimizer_kind_names() {
  return names_of(optimizer_names());
}
std::vector<std::string> delay_correction_names() {
  return names_in(kCorrectionNames);
}
DelayCorrection parse_delay_correction(const std::string& name) {
  return parse_name(kCorrectionNames, name, "correction");
}
std::string delay_correction_name(DelayCorrection correction) {
  return name_of(kCorrectionNames, correction);
}

}  // namespace pipesim::executor
