#pragma once
// Schedules chosen on the command line: "--schedules a,b:key=value,csv:PATH".
#include <string>
#include <vector>

#include "io/scenario.h"

namespace pipesim {

// A comma-separated list of name or name:key=value:key=value items; "csv:PATH" names a PyTorch CSV file (a
// path without ',' or ':'). A name the scenario lists keeps the scenario's parameters unless the item gives
// some. An empty list selects the scenario's schedules.
std::vector<ScheduleRequest> select_schedules(const Scenario& scenario, const std::string& list);

}  // namespace pipesim
