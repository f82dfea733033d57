#pragma once
// The parameters a schedule takes, found by building it with none: its factory asks for each one.
#include <set>
#include <string>

namespace pipesim {

// Empty for an unknown schedule or one that takes no parameter.
std::set<std::string> schedule_parameter_names(const std::string& schedule);

}  // namespace pipesim
