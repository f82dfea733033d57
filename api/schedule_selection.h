#pragma once
// Schedules chosen on the command line: "--schedules a,b:key=value,csv:PATH" or "--entry 1,3".
#include <string>
#include <vector>

#include "io/scenario.h"

namespace pipesim {

// A comma-separated list of name or name:key=value:key=value items (spaces around items trimmed);
// "csv:PATH" names a PyTorch CSV file (a path without ',' or ':'). A name is the registered schedule with its
// defaults and the scenario's pipeline, never a scenario entry of that name (--entry selects entries); an
// unknown name is an InputError with a did-you-mean. An empty list selects the scenario's schedules.
std::vector<ScheduleRequest> select_schedules(const Scenario& scenario, const std::string& list);

// The scenario's schedule entries at 1-based positions "1,3" (its `schedules:` list, or every registered
// schedule when it lists none), with their parameters and pipeline: overrides. Throws InputError naming the
// valid range.
std::vector<ScheduleRequest> select_entries(const Scenario& scenario, const std::string& list);

// --schedules and --entry together: at most one of them non-empty.
std::vector<ScheduleRequest> select_runs(const Scenario& scenario, const std::string& schedules,
                                         const std::string& entries);

}  // namespace pipesim
