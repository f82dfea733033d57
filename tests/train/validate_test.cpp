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

// The cost model's fallbacks for a profile without the executor's kernels (cpu-vm), on one stage holding
// every unit: W = its GEMMs + the gradient buffer (2 x 4 bytes per parameter), B = I + W, U = (g + 6) x 4
// bytes per parameter at the profile's bandwidth; each op plus one dispatch.
TEST(Validate, CpuProfileCostsFallBackToCopyBandwidthWithoutMeasuredKernels) {
  const HardwareProfile profile = load_hardware_profile(resolve_profile_path("cpu-vm"));
  executor::TrainingSetup setup;
  setup.shape = {.input_width = 16, .width = 32, .blocks = 2, .classes = 4};
  setup.samples_per_microbatch = 8;
  double parameters = 0;
  for (const auto& unit : executor::build_units<float>(setup.shape))
    parameters += static_cast<double>(unit->parameter_count());
  const double bytes_per_ns = profile.memory_bandwidth_gb_per_s;  // GB/s = bytes/ns
  const double dispatch_ns = profile.launch_overhead_us * 1e3;
  const auto step = [&](int m) {
    setup.microbatches_per_batch = m;
    return CpuProfileCosts(profile, setup, 1).duration({OpKind::U, false, 0, 0});
  };
  EXPECT_NEAR(step(8), 14 * 4 * parameters / bytes_per_ns + dispatch_ns, 1);
  EXPECT_NEAR(step(1), 7 * 4 * parameters / bytes_per_ns + dispatch_ns, 1);
  const CpuProfileCosts costs(profile, setup, 1);
  const TimeNs i = costs.duration({OpKind::I, false, 0, 0}), w = costs.duration({OpKind::W, false, 0, 0});
  EXPECT_NEAR(costs.duration({OpKind::B, false, 0, 0}), i + w - dispatch_ns, 1);
  EXPECT_GE(w + 1, static_cast<TimeNs>(2 * 4 * parameters / bytes_per_ns + dispatch_ns));
  EXPECT_EQ(costs.missing_terms().size(), 3u);  // element-wise kernels, the update, transposed GEMMs
  setup.shape.token_input = true;
  EXPECT_THROW(CpuProfileCosts(profile, setup, 1), InputError);
}

// A profile whose every rate is a round number, so that each op's time can be counted by hand.
HardwareProfile hand_count_profile() {
  std::string yaml =
      "format: pipesim-hardware-profile-1\n"
      "device: {name: hand, kind: cpu}\n"
      "provenance: {command: c, date: d, driver: dr, host: h, notes: n}\n"
      "memory_bandwidth_gb_per_s: 10\n"
      "launch_overhead_us: 2\n"
      "elementwise_ns_per_element: {layer_norm_forward: 3, layer_norm_input_grad: 5, layer_norm_weight_grad: "
      "7,\n"
      "  gelu_forward: 11, gelu_input_grad: 13, bias_fill: 17, bias_grad: 19, add: 23, copy: 29, zero_fill: "
      "31,\n"
      "  softmax_cross_entropy: 37, teacher_data: 41}\n"
      "update_ns_per_parameter: {sgd: {step: 43, per_gradient: 47}}\n";
  // GEMMs at 1, 2 and 4 GFLOP/s for nn, nt, tn, whatever the shape.
  for (const auto& [key, tflops] : {std::pair{"gemm", 0.001}, {"gemm_nt", 0.002}, {"gemm_tn", 0.004}}) {
    yaml += fmt::format("{}:\n  fp32:\n", key);
    for (int m : {1, 4096})
      for (int n : {1, 4096})
        for (int k : {1, 4096}) yaml += fmt::format("    - [{}, {}, {}, {}]\n", m, n, k, tflops);
  }
  return parse_hardware_profile(yaml, "hand.yaml");
}

// Every term of docs' op formulas, counted by hand for a model of one block (input 16 -> d 32, block 32 ->
// 128 -> 32, head 32 -> 4) on one stage, b = 8 samples.
TEST(Validate, CpuProfileCostsMatchHandCountedKernels) {
  const HardwareProfile profile = hand_count_profile();
  executor::TrainingSetup setup;
  setup.shape = {.input_width = 16, .width = 32, .blocks = 1, .classes = 4};
  setup.samples_per_microbatch = 8;
  setup.microbatches_per_batch = 4;
  const double b = 8, in = 16, d = 32, h = 128, c = 4;
  const auto gemm_ns = [](double m, double n, double k, double gflops) { return 2 * m * n * k / gflops; };
  const double f = 29 * b * in + 17 * b * d + gemm_ns(b, d, in, 1)  // input projection
                   + 3 * b * d + 17 * b * h + gemm_ns(b, h, d, 1) + 11 * b * h + 17 * b * d  // block
                   + gemm_ns(b, d, h, 1) + 23 * b * d                                        //
                   + 29 * b * d + 17 * b * c + gemm_ns(b, c, d, 1)                           // head
                   + 41 * b * in * (c + 1) + 37 * b * c + 2000;  // data, loss, dispatch
  const double i = 29 * b * d + gemm_ns(b, in, d, 2)             // input projection
                   + gemm_ns(b, h, d, 2) + 13 * b * h + gemm_ns(b, d, h, 2) + 5 * b * d + 23 * b * d +
                   29 * b * d + 29 * b * c + gemm_ns(b, d, c, 2) + 2000;
  const double parameters = (in * d + d) + (2 * d + d * h + h + h * d + d) + (d * c + c);
  const double w = gemm_ns(in, d, b, 4) + 19 * b * d  // input projection
                   + gemm_ns(h, d, b, 4) + 19 * b * d + gemm_ns(d, h, b, 4) + 19 * b * h + 7 * b * d  // block
                   + gemm_ns(d, c, b, 4) + 19 * b * c                                                 // head
                   + 31 * parameters + 2000;
  const CpuProfileCosts costs(profile, setup, 1);
  EXPECT_TRUE(costs.missing_terms().empty());
  EXPECT_NEAR(costs.duration({OpKind::F, false, 0, 0}), f, 1);
  EXPECT_NEAR(costs.duration({OpKind::I, false, 0, 0}), i, 1);
  EXPECT_NEAR(costs.duration({OpKind::W, false, 0, 0}), w, 1);
  EXPECT_NEAR(costs.duration({OpKind::B, false, 0, 0}), i + w - 2000, 1);
  // U sums the m = 4 gradients of a batch by default; a schedule that steps per microbatch sums one.
  EXPECT_NEAR(costs.duration({OpKind::U, false, 0, 0}), parameters * (43 + 47 * 4) + 2000, 1);
  const CpuProfileCosts per_microbatch(profile, setup, 1, {1.0});
  EXPECT_NEAR(per_microbatch.duration({OpKind::U, false, 0, 0}), parameters * (43 + 47 * 1) + 2000, 1);
}

// validate charges each schedule's U for the gradients it really sums: one per microbatch for PipeDream
// (it steps after every microbatch), m for 1F1B.
TEST(Validate, PerMicrobatchStepSchedulesAreChargedOneGradientPerUpdate) {
  const ScheduleValidation per_batch = validate_small("1f1b-flush", 2);
  const ScheduleValidation per_microbatch = validate_small("pipedream", 2);
  const auto u_of = [](const ScheduleValidation& v) {
    for (const OpTimeComparison& c : v.op_times)
      if (c.kind == OpKind::U && c.stage == 0) return c.predicted_mean_ms;
    return -1.0;
  };
  // cpu-vm has no measured update: U = (g + 6) x 4 bytes per parameter + dispatch, g = 4 (m) or 1.
  const HardwareProfile profile = load_hardware_profile(resolve_profile_path("cpu-vm"));
  const double dispatch_ms = profile.launch_overhead_us * 1e-3;
  EXPECT_NEAR((u_of(per_batch) - dispatch_ms) / (u_of(per_microbatch) - dispatch_ms), (4.0 + 6) / (1 + 6),
              1e-3);
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
