// ZB-V and the PyTorch names through the api: the Zero Bubble per-batch figures and the steady run's peaks
// that a scenario's run reports, and that a PyTorch name runs what pipesim's name does. Its orders and fixed
// runs: tests/schedules/zb_v_test.cpp.
#include <gtest/gtest.h>

#include "schedules/registry.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::run_schedule;
using test::scenario_from_yaml;

Scenario zb_v_scenario(int devices, int microbatches, double f_ms, double i_ms, double w_ms,
                       double comm_ms = 0) {
  return scenario_from_yaml(
      fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: 1}}\n"
                  "costs: {{forward_ms: {}, backward_input_ms: {}, backward_weight_ms: {}, comm_ms: {},\n"
                  "        activation_bytes: 10, weight_grad_activation_bytes: 3}}\n"
                  "optimizer: {{sync: post-validation}}\n",
                  devices, microbatches, f_ms, i_ms, w_ms, comm_ms));
}

// With F = I = W every device runs without a gap from its first op to its last once m >= 2N-1: the Zero
// Bubble per-batch bubble (longest device span minus m(F+I+W)) is 0.
TEST(ZbV, NoBubbleWhenFEqualsIEqualsWAndMAtLeast2NMinus1) {
  for (int n : {2, 3, 4, 6, 8}) {
    for (int m : {2 * n - 1, 2 * n, 3 * n + 1}) {
      SCOPED_TRACE(fmt::format("N={} m={}", n, m));
      const SimulationResult r = run_schedule(zb_v_scenario(n, m, 2, 2, 2), "zb-v");
      EXPECT_EQ(r.metrics.zb_bubble_ns, 0);
      EXPECT_EQ(r.metrics.zb_batch_cost_ns, ms_to_ns(m * 6));
      EXPECT_EQ(r.virtual_stages, 2 * n);
    }
  }
}

// Below 2N-1 microbatches the order drops the missing microbatches' ops and still runs; with uneven costs and
// comm too. Peak activations stay within 1F1B's N microbatches per device (2N chunk activations of half
// size).
TEST(ZbV, RunsForEveryMAndHoldsAtMost1F1BsActivations) {
  for (int n : {2, 3, 5}) {
    for (int m = 1; m <= 3 * n; ++m) {
      SCOPED_TRACE(fmt::format("N={} m={}", n, m));
      const SimulationResult r = run_schedule(zb_v_scenario(n, m, 1.5, 1.25, 0.75, 0.1), "zb-v");
      EXPECT_GT(r.metrics.throughput_samples_per_s, 0);
      for (int in_flight : r.trace.peak_in_flight) EXPECT_LE(in_flight, 2 * std::min(n, m));
    }
  }
}

// PyTorch's class names (get_schedule_class) select the same schedules, case-insensitively and with or
// without the "Schedule" prefix; the ones pipesim lacks say so and name the closest.
TEST(PytorchScheduleNames, SelectTheSameSchedules) {
  const ScheduleParams params("test");
  EXPECT_EQ(make_schedule("ZBVZeroBubble", params)->label(), "zb-v");
  EXPECT_EQ(make_schedule("ScheduleGPipe", params)->label(), "gpipe");
  EXPECT_EQ(make_schedule("1f1b", params)->label(), "1f1b-flush");
  EXPECT_EQ(make_schedule("ScheduleInterleaved1F1B", params)->layout(4).stages, 8);
  const Scenario scenario = zb_v_scenario(3, 6, 1, 1, 1);
  EXPECT_EQ(run_schedule(scenario, "ZBVZeroBubble").metrics.period_ns,
            run_schedule(scenario, "zb-v").metrics.period_ns);
  try {
    make_schedule("zbv", params);
    ADD_FAILURE() << "no error for zbv";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("their PyTorch names (GPipe, 1F1B, Interleaved1F1B, LoopedBFS, "
                                         "InterleavedZeroBubble, ZBVZeroBubble, DualPipeV)"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pipesim
