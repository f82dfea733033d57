#pragma once
// Scenarios from short YAML snippets, for the tests of io/ and above (tests/test_util.h includes it too).
#include <string>
#include <vector>

#include "io/scenario.h"

namespace pipesim::test {

inline constexpr const char* kTestSource = "test.yaml";

// A scenario from YAML text, reported as coming from test.yaml.
inline Scenario scenario_from_yaml(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return parse_scenario(yaml, kTestSource, overrides);
}

}  // namespace pipesim::test
