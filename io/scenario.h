#pragma once
// Reading a scenario (spec/scenario.h) from YAML (format in README.md) with every key checked.
#include <string>
#include <vector>

#include "spec/scenario.h"

namespace pipesim {

// `overrides` are "dotted.key=value" strings (--set); the value is parsed as YAML. A relative path that is
// not there is looked up under the data directories (io/data_dirs.h: share/ in the source tree), so
// `scenarios/default.yaml` is the shipped scenario from any directory.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
Scenario parse_scenario(const std::string& yaml_text, const std::string& source,
                        const std::vector<std::string>& overrides = {});

// The scenario `pipesim run` uses when none is given.
std::string default_scenario_path();

}  // namespace pipesim
