#pragma once
// Reads a scenario's `measured:` section (spec/measured_run.h): what a published run of the job measured.
#include <string>
#include <vector>

#include "spec/measured_run.h"

namespace YAML {
class Node;
}

namespace pipesim {

class YamlReader;

// Reads `measured:`; errors name the file, line and key and say what is allowed. `schedule_names` are the
// scenario's schedule entries (empty: every registered schedule runs), which `measured.schedule` must name.
MeasuredRun read_measured_section(const YamlReader& reader, const YAML::Node& node,
                                  const std::vector<std::string>& schedule_names);

}  // namespace pipesim
