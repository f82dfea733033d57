#pragma once
// The small scenario `pipesim show` and `pipesim export` build from command-line options instead of a YAML
// file: uniform per-device costs, a fixed comm latency, one schedule.
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

// The scenario and the one schedule request. Throws InputError for malformed costs.
Scenario quick_scenario(const QuickScenarioArgs& args);
ScheduleRequest quick_request(const QuickScenarioArgs& args);

}  // namespace pipesim
