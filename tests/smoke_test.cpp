#include <gtest/gtest.h>

#include "cli/simulation.h"

namespace pipesim {
namespace {

TEST(Smoke, DefaultScenarioRuns) {
  const Scenario scenario = load_scenario(default_scenario_path());
  for (const ScheduleRequest& request : requested_schedules(scenario)) {
    const SimulationResult result = simulate_schedule(scenario, request);
    EXPECT_GT(result.metrics.simulated_ops, 0) << result.schedule;
  }
}

}  // namespace
}  // namespace pipesim
