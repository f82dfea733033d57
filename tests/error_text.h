#pragma once
// Test helpers that need nothing above base/: the text of an InputError an action throws, and a search over
// lines of an account. Header-only, for the tests of any layer (tests/test_util.h, which runs scenarios
// through the API, includes it too).
#include <algorithm>
#include <string>
#include <vector>

#include "base/errors.h"

namespace pipesim::test {

// The message of the InputError that `action` throws, or "no error".
template <typename Action>
std::string input_error_of(Action&& action) {
  try {
    action();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

// Whether any of `lines` contains `text`.
inline bool any_line_contains(const std::vector<std::string>& lines, const std::string& text) {
  return std::any_of(lines.begin(), lines.end(),
                     [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

}  // namespace pipesim::test
