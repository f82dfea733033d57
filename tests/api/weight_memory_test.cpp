// Weight memory = parameter bytes x live weight versions: PipeDream's grows with depth, PACI's does
// not.
#include <gtest/gtest.h>

#include "api/simulation.h"
#include "report/report.h"

namespace pipesim {
namespace {

SimulationResult run(const std::string& schedule) {
  const Scenario scenario = parse_scenario(R"(
pipeline: {stages: 4, microbatches: 8, batches: 6}
costs: {forward_ms: 1, backward_ms: 2, activation_bytes: 10, parameter_bytes: 1000}
)",
                                           "weights.yaml");
  ScheduleParams params("weights.yaml");
  return simulate_schedule(scenario, {schedule, params});
}

TEST(WeightMemory, PipeDreamHoldsOneCopyPerStashedVersion) {
  const SimulationResult result = run("pipedream");
  const int n = 4;
  for (int d = 0; d < n; ++d) {
    const DeviceMemory& memory = result.memory.devices[d];
    // Stage i (1-based) keeps N-i+1 versions and N-i+1 microbatches of activations at its peak.
    EXPECT_EQ(memory.weight_versions_max, n - d) << "device " << d;
    EXPECT_EQ(memory.peak_bytes, 1000 * (n - d) + 10 * (n - d)) << "device " << d;
  }
}

TEST(WeightMemory, PaciAndFlushHoldOneCopy) {
  for (const char* schedule : {"paci", "1f1b-flush"}) {
    const SimulationResult result = run(schedule);
    for (int d = 0; d < 4; ++d) {
      EXPECT_EQ(result.memory.devices[d].weight_versions_max, 1) << schedule << " device " << d;
      EXPECT_EQ(result.memory.devices[d].peak_bytes, 1000 + 10 * (4 - d)) << schedule << " device " << d;
    }
  }
}

}  // namespace
}  // namespace pipesim

namespace pipesim {
namespace {

// Asynchronous schedules never flush: the scenario's optimizer sync must not reach them, and they have no
// per-batch ZB bubble rate.
TEST(AsyncSync, ScenarioSyncDoesNotApplyToAsyncSchedules) {
  const std::string yaml =
      "pipeline: {stages: 4, microbatches: 8, batches: 6}\n"
      "costs: {forward_ms: 1, backward_ms: 2}\n"
      "optimizer: {sync: barrier}\n";
  const Scenario scenario = parse_scenario(yaml, "sync.yaml");
  const SimulationResult paci = simulate_schedule(scenario, {"paci", ScheduleParams("sync.yaml")});
  EXPECT_EQ(paci.spec.sync, OptimizerSync::kNone);
  EXPECT_FALSE(has_batch_bubble(paci));
  const SimulationResult flush = simulate_schedule(scenario, {"1f1b-flush", ScheduleParams("sync.yaml")});
  EXPECT_EQ(flush.spec.sync, OptimizerSync::kBarrier);
  EXPECT_TRUE(has_batch_bubble(flush));
}

}  // namespace
}  // namespace pipesim
