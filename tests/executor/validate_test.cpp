// `pipesim validate`'s library half: the executor's runs against the engine's predictions.
#include "api/validate.h"

#include <gtest/gtest.h>

#include "executor/real_executor.h"
#include "io/hardware_profile_reader.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

ScheduleValidation validate_small(const std::string& name, int devices) {
  const Scenario scenario = test::scenario_from_yaml(fmt::format(
      "pipeline: {{stages: {}, microbatches: {}, batches: 2}}\n"
      "costs: {{forward_ms: 1.0, backward_input_ms: 1.0, backward_weight_ms: 0.7, activation_bytes: 1e6,\n"
      "        weight_grad_activation_bytes: 4e5}}\n",
      devices, 2 * devices));
  ValidationOptions options;
  options.setup.shape = {.input_width = 16, .width = 32, .blocks = 2, .classes = 4};
  options.setup.samples_per_microbatch = 8;
  const HardwareProfile profile = load_hardware_profile(resolve_profile_path("cpu-vm"));
  return validate_schedule(scenario, {name, ScheduleParams(test::kTestSource)}, options, profile);
}

TEST(Validate, PercentErrorIsRelativeToTheMeasurement) {
  EXPECT_DOUBLE_EQ(percent_error(110, 100), 10);
  EXPECT_DOUBLE_EQ(percent_error(90, 100), 10);
  EXPECT_DOUBLE_EQ(percent_error(0, 0), 0);
}

TEST(Validate, FittedPredictionAgreesOnDriftExactlyForSynchronousAnd2bwSchedules) {
  // Schedules whose versions do not depend on arrival times (PipeDream, async 1F1B and PACI read arrivals, so
  // a loaded machine may legitimately change their real-mode Δ).
  for (const std::string name : {"1f1b-flush", "zb-h1", "pipedream-2bw"}) {
    const ScheduleValidation v = validate_small(name, 2);
    EXPECT_TRUE(v.drift_exact) << name;
    EXPECT_EQ(v.fitted.max_drift_per_stage, v.measured.max_drift_per_stage) << name;
    EXPECT_GT(v.measured.throughput_samples_per_s, 0) << name;
    EXPECT_GT(v.cost_model.throughput_samples_per_s, 0) << name;
    // Synchronous schedules read one version per batch: no drift at all.
    if (name == "1f1b-flush" || name == "zb-h1") {
      EXPECT_EQ(v.measured.max_drift_per_stage, std::vector<int>(2, 0));
    }
    EXPECT_DOUBLE_EQ(v.drift_agreement, 1.0) << name;  // every (stage, microbatch)
  }
}

TEST(Validate, MoreDevicesThanCoresReplaysOnEachOpsOwnCpuTime) {
  const int devices = static_cast<int>(executor::allowed_cores().size()) + 1;
  const ScheduleValidation v = validate_small("1f1b-flush", devices);
  EXPECT_EQ(v.mode, "replay");
  EXPECT_TRUE(v.drift_exact);
  // Every op of the replay lasts its own measured CPU time, the fitted prediction its (kind, stage) mean:
  // close, not equal by construction (the per-op replay is tested in measured_costs_test.cpp).
  EXPECT_GT(v.measured.makespan_ms, 0);
  EXPECT_NEAR(v.fitted.makespan_ms, v.measured.makespan_ms, 0.5 * v.measured.makespan_ms);
  EXPECT_EQ(v.fitted.peak_in_flight, v.measured.peak_in_flight);
  // 1F1B holds at most N - i microbatches on device i: N on the first.
  EXPECT_EQ(v.measured.peak_in_flight, devices);
}

}  // namespace
}  // namespace pipesim
