#pragma once
// The small scenario `pipesim show` and `pipesim export` build from command-line options instead of a YAML
// file: uniform per-device costs, a fixed comm latency, one schedule.
#include <CLI/CLI.hpp>
#include <string>

#include "io/scenario.h"

namespace pipesim {

struct QuickScenarioArgs {
  std::string schedule;  // name, name:key=value, or csv:PATH
  int stages = 4;
  int microbatches = 8;
  int chunks = 0;               // 0: the schedule's default
  std::string costs = "1,1,1";  // F,B or F,I,W in ms
  std::string comm_ms = "0";    // a string, so that NaN and infinities reach the range check
  int batches = 1;
};

// Adds SCHEDULE, --stages, --microbatches, --chunks, --costs and --comm to a subcommand.
void add_quick_scenario_options(CLI::App* cmd, QuickScenarioArgs& args);

// The scenario and the one schedule request. Throws InputError for malformed costs.
Scenario quick_scenario(const QuickScenarioArgs& args);
ScheduleRequest quick_request(const QuickScenarioArgs& args);

}  // namespace pipesim
