#pragma once
// CLI11 validators for numbers: CLI11's own Range, PositiveNumber and NonNegativeNumber let NaN through
// (every comparison with NaN is false), and infinities pass "positive". These refuse both, as the YAML reader
// does. And one for output paths, which CLI11 takes as they come (empty, or an option's name).
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/errors.h"
#include "cli/commands.h"

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

// An output option's value: a path, or - for standard output; never empty and never an option ("--json --"
// would write a file named --, "-o --csv" would swallow the option).
inline CLI::Validator output_path() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty()) return "expected a file path or - (standard output), got an empty path";
        if (text.size() > 1 && text[0] == '-') {
          return fmt::format(
              "expected a file path or - (standard output), got '{}', which reads as an option "
              "(write ./{} for a file of that name)",
              text, text);
        }
        return "";
      },
      "");
}

// Every option that names an output (file or directory), in every command: output_path() checks its value.
inline void check_output_options(CLI::App& app) {
  static const std::vector<std::string> kOutputOptions = {"--json",     "--csv", "--trace",  "--junit",
                                                          "--markdown", "--out", "--output", "--dump-init"};
  for (CLI::Option* option : app.get_options()) {
    for (const std::string& name : option->get_lnames()) {
      if (std::find(kOutputOptions.begin(), kOutputOptions.end(), "--" + name) != kOutputOptions.end()) {
        option->check(output_path());
        // A file's directory must exist and be writable (check_output_path): an error (exit 1) naming the
        // option, before any work is done. `--out` names a directory where a command writes several files.
        if (name != "out") {
          option->each([option_name = "--" + name](const std::string& path) {
            try {
              check_output_path(path);
            } catch (const InputError& e) {
              throw InputError(fmt::format("{} {}", option_name, e.what()));
            }
          });
        }
        break;
      }
    }
  }
  for (CLI::App* sub : app.get_subcommands({})) check_output_options(*sub);
}

}  // namespace pipesim
