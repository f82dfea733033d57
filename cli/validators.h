#pragma once
// CLI11 validators for numbers: CLI11's own Range, PositiveNumber and NonNegativeNumber let NaN through
// (every comparison with NaN is false), and infinities pass "positive". These refuse both, as the YAML reader
// does.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <string>

namespace pipesim {

// A finite number in [min_value, max_value].
inline CLI::Validator finite_range(double min_value, double max_value) {
  return CLI::Validator(
      [min_value, max_value](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value)) {
          return fmt::format("'{}' is not a finite number", text);
        }
        if (value < min_value || value > max_value) {
          return fmt::format("{} is not in [{:g}, {:g}]", text, min_value, max_value);
        }
        return "";
      },
      fmt::format("NUMBER in [{:g}, {:g}]", min_value, max_value));
}

}  // namespace pipesim
