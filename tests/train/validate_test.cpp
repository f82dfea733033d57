// `pipesim validate`'s library half: the executor's runs against the engine's predictions.
#include "train/validate.h"

#include <gtest/gtest.h>

#include "executor/costs/cpu_profile_costs.h"
#include "executor/model.h"
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

TEST(Validate, DriftAgreementCountsEveryPairEitherSideHolds) {
  const DriftPerMicrobatch run{{{0, 0}, 1}, {{0, 1}, 0}, {{1, 0}, 2}};
  EXPECT_DOUBLE_EQ(drift_agreement(run, run), 1.0);
  EXPECT_DOUBLE_EQ(drift_agreement({}, {}), 1.0);
  DriftPerMicrobatch one_differs = run;
  one_differs[{1, 0}] = 1;
  EXPECT_DOUBLE_EQ(drift_agreement(one_differs, run), 2.0 / 3.0);
  // A pair only one side holds counts as a disagreement, on either side.
  DriftPerMicrobatch extra = run;
  extra[{1, 1}] = 0;
  EXPECT_DOUBLE_EQ(drift_agreement(extra, run), 3.0 / 4.0);
  EXPECT_DOUBLE_EQ(drift_agreement(run, extra), 3.0 / 4.0);
}

// The cost model's memory terms, on one stage holding every unit: W = its GEMMs + the gradient buffer
// (2 x 4 bytes per parameter), B = I + W, U = (m + 6) x 4 bytes per parameter, at the profile's bandwidth.
TEST(Validate, CpuProfileCostsChargeTheGradientBufferAndTheStepAtCopyBandwidth) {
  const HardwareProfile profile = load_hardware_profile(resolve_profile_path("cpu-vm"));
  executor::TrainingSetup setup;
  setup.shape = {.input_width = 16, .width = 32, .blocks = 2, .classes = 4};
  setup.samples_per_microbatch = 8;
  double parameters = 0;
  for (const auto& unit : executor::build_units<float>(setup.shape))
    parameters += static_cast<double>(unit->parameter_count());
  const double bytes_per_ns = profile.memory_bandwidth_gb_per_s;  // GB/s = bytes/ns
  const auto step = [&](int m) {
    setup.microbatches_per_batch = m;
    return CpuProfileCosts(profile, setup, 1).duration({OpKind::U, false, 0, 0});
  };
  EXPECT_NEAR(step(8), 14 * 4 * parameters / bytes_per_ns, 1);
  EXPECT_NEAR(step(1), 7 * 4 * parameters / bytes_per_ns, 1);
  const CpuProfileCosts costs(profile, setup, 1);
  const TimeNs i = costs.duration({OpKind::I, false, 0, 0}), w = costs.duration({OpKind::W, false, 0, 0});
  EXPECT_NEAR(costs.duration({OpKind::B, false, 0, 0}), i + w, 1);
  // W's GEMMs are at least as costly as 0 ns, so W is at least the buffer's traffic.
  EXPECT_GE(w + 1, static_cast<TimeNs>(2 * 4 * parameters / bytes_per_ns));
  setup.shape.token_input = true;
  EXPECT_THROW(CpuProfileCosts(profile, setup, 1), InputError);
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
  // Every op of the replay lasts its own measured CPU time, the fitted predictions a draw from its (kind,
  // stage)'s times or their mean: close, not equal by construction (the per-op replay is tested in
  // measured_costs_test.cpp).
  EXPECT_GT(v.measured.makespan_ms, 0);
  EXPECT_NEAR(v.fitted.makespan_ms, v.measured.makespan_ms, 0.5 * v.measured.makespan_ms);
  EXPECT_NEAR(v.fitted_means.makespan_ms, v.measured.makespan_ms, 0.5 * v.measured.makespan_ms);
  EXPECT_EQ(v.fitted.peak_in_flight, v.measured.peak_in_flight);
  // 1F1B holds at most N - i microbatches on device i: N on the first.
  EXPECT_EQ(v.measured.peak_in_flight, devices);
}

}  // namespace
}  // namespace pipesim
