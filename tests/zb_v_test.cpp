// ZB-V: its op order against PyTorch's generator (ScheduleZBVZeroBubble) on N = 4, m = 8, worked from its
// code; no bubble for F = I = W from m = 2N-1 on; valid lists for every m; 1F1B's activation memory.
#include <gtest/gtest.h>

#include <sstream>

#include "schedules/pytorch_csv.h"
#include "schedules/zb_handcrafted.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::run_schedule;
using test::scenario_from_yaml;

// PyTorch's per-rank order for N = 4, m = 8 (traced from torch/distributed/pipelining/schedules.py).
TEST(ZbV, OrderEqualsPyTorchsGeneratorForFourRanksEightMicrobatches) {
  const std::string expected =
      "0F0,0F1,0F2,0F3,0F4,0F5,0F6,7F0,7I0,7W0,7F1,7I1,7W1,7F2,7I2,7W2,7F3,7I3,7W3,0F7,0I0,0W0,7F4,7I4,7W4,"
      "0I1,"
      "0W1,7F5,7I5,7W5,0I2,0W2,7F6,7I6,7W6,0I3,0W3,7F7,7I7,7W7,0I4,0W4,0I5,0W5,0I6,0W6,0I7,0W7\n"
      "1F0,1F1,1F2,1F3,1F4,6F0,1F5,6F1,6I0,6W0,6F2,6I1,6W1,6F3,6I2,6W2,1F6,1I0,1W0,6F4,6I3,6W3,1F7,1I1,1W1,"
      "6F5,"
      "6I4,6W4,1I2,1W2,6F6,6I5,6W5,1I3,1W3,6F7,6I6,6W6,1I4,6I7,1I5,1W4,1I6,1W5,1I7,1W6,6W7,1W7\n"
      "2F0,2F1,2F2,5F0,2F3,5F1,2F4,5F2,5I0,5W0,5F3,5I1,5W1,2F5,2I0,2W0,5F4,5I2,5W2,2F6,2I1,2W1,5F5,5I3,5W3,"
      "2F7,"
      "2I2,2W2,5F6,5I4,5W4,2I3,2W3,5F7,5I5,5W5,2I4,5I6,2I5,5I7,2I6,2W4,2I7,2W5,5W6,5W7,2W6,2W7\n"
      "3F0,4F0,3F1,4F1,3F2,4F2,3F3,4F3,4I0,4W0,3F4,3I0,3W0,4F4,4I1,4W1,3F5,3I1,3W1,4F5,4I2,4W2,3F6,3I2,3W2,"
      "4F6,"
      "4I3,4W3,3F7,3I3,3W3,4F7,4I4,4W4,3I4,4I5,3I5,4I6,3I6,4I7,3I7,3W4,4W5,4W6,4W7,3W5,3W6,3W7\n";
  EXPECT_EQ(format_pytorch_csv(zb_v_lists(4, 8)), expected);
}

Scenario uniform(int devices, int microbatches, double f_ms, double i_ms, double w_ms, double comm_ms = 0) {
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
      const SimulationResult r = run_schedule(uniform(n, m, 2, 2, 2), "zb-v");
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
      const SimulationResult r = run_schedule(uniform(n, m, 1.5, 1.25, 0.75, 0.1), "zb-v");
      EXPECT_GT(r.metrics.throughput_samples_per_s, 0);
      for (int in_flight : r.trace.peak_in_flight) EXPECT_LE(in_flight, 2 * std::min(n, m));
    }
  }
}

}  // namespace
}  // namespace pipesim
