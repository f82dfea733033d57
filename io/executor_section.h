#pragma once
// Reads the scenario's `executor:` section (spec/executor_section.h).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "spec/executor_section.h"

namespace YAML {
class Node;
}

namespace pipesim {

class YamlReader;

// Reads `executor:`; errors name the file, line and key and say what is allowed.
ExecutorSection read_executor_section(const YamlReader& reader, const YAML::Node& node);

}  // namespace pipesim
