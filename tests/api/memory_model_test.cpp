// The memory model on simulated runs (its sums on hand-made timelines: tests/analysis/memory_model_test.cpp):
// ops of 0 ns on both run paths, closed forms, and the Zero Bubble paper's measured peaks (1F1B-flush and
// ZB-2p) within 10%.
#include "analysis/memory_model.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "api/zb_model_scenario.h"
#include "cost_models/transformer/stage_costs.h"
#include "report/format.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

TEST(MemoryModel, OpsOfZeroNanosecondsHoldWhatTheyAllocate) {
  // zb-1p with F and W of 0 ns: within one instant a device runs F (allocating M_B) before the W that frees
  // M_W; the peak was taken after the instant only and fell below the device's own peak activations.
  const Scenario s = test::scenario_from_yaml(
      "pipeline: {stages: 4, microbatches: 8}\n"
      "costs: {forward_ms: 0, backward_input_ms: 0.000001, backward_weight_ms: 0, "
      "weight_grad_activation_bytes: 500000, parameter_bytes: 1000}\n");
  for (const bool keep_trace : {false, true}) {
    SimulationOptions options;
    options.keep_trace = keep_trace;
    const SimulationResult r = test::run_schedule(s, "zb-1p", {}, options);
    for (size_t d = 0; d < r.memory.devices.size(); ++d) {
      EXPECT_GE(r.memory.devices[d].peak_bytes, r.metrics.devices[d].peak_activation_bytes + 1000)
          << "device " << d + 1 << (keep_trace ? " recorded" : " streamed");
    }
  }
}

// A small transformer on the A100 profile: the model's closed forms hold on simulated runs.
Scenario small_scenario(const std::string& schedules) {
  return parse_scenario(
      "model: {layers: 8, hidden: 512, heads: 8, seq_len: 256, vocab: 1000}\n"
      "hardware: {profile: a100-sxm4-80gb}\n"
      "pipeline: {stages: 4, microbatches: 8, microbatch_size: 2, batches: 3}\n"
      "schedules: [" +
          schedules + "]\n",
      "small.yaml");
}

TEST(MemoryModel, OneFOneBPeakIsStaticPlusNTimesMB) {
  const Scenario s = small_scenario("1f1b-flush");
  const SimulationResult run = simulate_schedule(s, s.schedules[0], SimulationOptions{});
  const std::vector<StageCosts> c = transformer_stage_costs(*s.transformer, 2, 4);
  for (int d = 0; d < 4; ++d) {
    const double fixed = c[d].parameter_bytes + c[d].gradient_bytes + c[d].optimizer_bytes;
    // Stage i (1-based) holds N - i + 1 microbatches at its peak.
    const double expected = fixed + (4 - d) * c[d].activation_bytes;
    EXPECT_NEAR(static_cast<double>(run.memory.devices[d].peak_bytes), expected, 4) << "device " << d;
    EXPECT_EQ(run.memory.devices[d].weight_versions_max, 1);
  }
}

TEST(MemoryModel, PipeDreamHoldsAWeightCopyPerStash) {
  const Scenario s = small_scenario("pipedream");
  const SimulationResult run = simulate_schedule(s, s.schedules[0], SimulationOptions{});
  const std::vector<StageCosts> c = transformer_stage_costs(*s.transformer, 2, 4);
  for (int d = 0; d < 4; ++d) {
    const DeviceMemory& m = run.memory.devices[d];
    EXPECT_EQ(m.weight_versions_max, 4 - d) << "device " << d;  // N - i + 1 versions
    EXPECT_EQ(m.peak_weight_bytes % std::llround(c[d].parameter_bytes), 0);
    EXPECT_GE(m.peak_bytes,
              std::llround(c[d].gradient_bytes + c[d].optimizer_bytes + (4 - d) * c[d].parameter_bytes));
  }
  // PACI keeps one copy whatever the drift.
  const Scenario p = small_scenario("{name: paci, accumulation: 2}");
  for (const DeviceMemory& m : simulate_schedule(p, p.schedules[0], SimulationOptions{}).memory.devices)
    EXPECT_EQ(m.weight_versions_max, 1);
}

// docs/design.md §6: at the Zero Bubble settings the predicted peaks of 1F1B-flush and ZB-2p fall within
// 10% of the paper's measurements (A100 80GB, GB = 1e9 bytes).
TEST(MemoryModel, ZeroBubblePaperPeaksWithinTenPercent) {
  const std::string data = default_reference_data_dir();
  const std::vector<ZbModel> models = load_zb_models(data);
  std::vector<std::vector<std::string>> rows;
  for (const ZbMeasured& row : load_zb_measured(data)) {
    const Scenario s =
        zb_model_scenario(find_zb_model(models, row.model), row.microbatches, "a100-sxm4-80gb", 2);
    const double flush_gb = simulate_schedule(s, {"1f1b-flush", ScheduleParams("test")}, SimulationOptions{})
                                .memory.peak_bytes() /
                            1e9;
    const double zb2p_gb =
        simulate_schedule(s, {"zb-2p", ScheduleParams("test")}, SimulationOptions{}).memory.peak_bytes() /
        1e9;
    rows.push_back({row.model, std::to_string(row.microbatches), fmt::format("{:.1f}", flush_gb),
                    fmt::format("{:.0f}", row.memory_gb_1f1b),
                    fmt::format("{:.3f}", flush_gb / row.memory_gb_1f1b), fmt::format("{:.1f}", zb2p_gb),
                    fmt::format("{:.0f}", row.memory_gb_zb2p),
                    fmt::format("{:.3f}", zb2p_gb / row.memory_gb_zb2p)});
    EXPECT_NEAR(flush_gb / row.memory_gb_1f1b, 1, 0.10) << row.model << " m=" << row.microbatches << " 1F1B";
    EXPECT_NEAR(zb2p_gb / row.memory_gb_zb2p, 1, 0.10) << row.model << " m=" << row.microbatches << " ZB-2p";
  }
  std::cout << "peak memory per device (GB), predicted vs measured (Zero Bubble paper, Table 4)\n"
            << render_table(
                   {"model", "m", "1F1B pred", "1F1B meas", "ratio", "ZB-2p pred", "ZB-2p meas", "ratio"},
                   rows);
}

}  // namespace
}  // namespace pipesim
