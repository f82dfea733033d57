// ZB-H1 and ZB-H2 (Zero Bubble, arXiv 2401.10241 §3.1) against their closed forms with uniform stages
// and no comm, through the api's steady runs: the per-batch bubble in the paper's convention (longest
// per-device span minus m(F+I+W)), the period and the in-flight and activation peaks the run reports. The
// parallelogram of one H2 batch and valid lists for any m: tests/schedules/zb_handcrafted_test.cpp.
//
// Ranges, found by simulating every F, I, W in {1..7} ms for N = 2..7 (docs/design.md §5 gives the m range):
// - ZB-H1, m >= N: (N-1)(F+I-W) when W <= F. With W > F the bubble is (N-1)I: stage 1 holds N
//   microbatches and has nothing to run while its first gradient climbs back, which takes (N-1)I.
// - ZB-H2, m >= 2N-1, W <= F: max(0, (N-1)(F+I-2W)); the paper's setting F = I = W gives 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::run_schedule;
using test::scenario_from_yaml;

struct Costs {
  TimeNs forward_ns;
  TimeNs input_ns;   // I
  TimeNs weight_ns;  // W
};

constexpr TimeNs kOneMsNs = 1'000'000;

Scenario zb_scenario(int stages, int microbatches, const Costs& c, const std::string& sync, int batches,
                     double comm_ms = 0) {
  return scenario_from_yaml(
      fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: {}}}\n"
                  "costs: {{forward_ms: {}, backward_input_ms: {}, backward_weight_ms: {}, comm_ms: {},\n"
                  "        activation_bytes: 10, weight_grad_activation_bytes: 3}}\n"
                  "optimizer: {{sync: {}}}\n",
                  stages, microbatches, batches, ns_to_ms(c.forward_ns), ns_to_ms(c.input_ns),
                  ns_to_ms(c.weight_ns), comm_ms, sync));
}

std::vector<int> stage_counts() {
  return {2, 3, 4, 6, 8};
}

// Checks the Zero Bubble bubble and that the cost and the bubble fraction agree with it.
void expect_zb_bubble(const SimulationResult& r, int microbatches, const Costs& c,
                      TimeNs expected_bubble_ns) {
  const TimeNs work_ns = microbatches * (c.forward_ns + c.input_ns + c.weight_ns);
  EXPECT_EQ(r.metrics.zb_bubble_ns, expected_bubble_ns);
  EXPECT_EQ(r.metrics.zb_batch_cost_ns, work_ns + expected_bubble_ns);
  EXPECT_NEAR(r.metrics.bubble_rate_zb,
              static_cast<double>(expected_bubble_ns) / (work_ns + expected_bubble_ns), 1e-12);
}

// ZB-H1 over one batch (post-validation: U right after each device's last op), and, where stage 1 ends
// last (W <= I), also under the barrier over 3 batches, where the metrics measure the middle one: then
// stage 1's span is the whole batch, so the period and the bubble fraction follow from the same bubble.
// With I < W the last stage ends (N-1)(W-I) after stage 1, and the barrier makes every stage wait for it.
TEST(ZbH1, BubbleIsNMinus1TimesFPlusIMinusW) {
  const std::vector<Costs> costs = {
      {1 * kOneMsNs, 1 * kOneMsNs, 1 * kOneMsNs}, {2 * kOneMsNs, 2 * kOneMsNs, 1 * kOneMsNs},
      {1'500'000, 1'200'000, 1 * kOneMsNs},       {1 * kOneMsNs, 2 * kOneMsNs, 1 * kOneMsNs},
      {3 * kOneMsNs, 1 * kOneMsNs, 500'000},      {2 * kOneMsNs, 1 * kOneMsNs, 2 * kOneMsNs}};
  for (const Costs& c : costs) {
    for (int n : stage_counts()) {
      for (int m : {n, n + 1, 2 * n, 3 * n}) {
        SCOPED_TRACE(fmt::format("N={} m={} F={} I={} W={} ns", n, m, c.forward_ns, c.input_ns, c.weight_ns));
        const TimeNs bubble_ns = (n - 1) * (c.forward_ns + c.input_ns - c.weight_ns);
        expect_zb_bubble(run_schedule(zb_scenario(n, m, c, "post-validation", 1), "zb-h1"), m, c, bubble_ns);
        if (c.weight_ns > c.input_ns) continue;
        const SimulationResult r = run_schedule(zb_scenario(n, m, c, "barrier", 3), "zb-h1");
        expect_zb_bubble(r, m, c, bubble_ns);
        EXPECT_EQ(r.metrics.period_ns, m * (c.forward_ns + c.input_ns + c.weight_ns) + bubble_ns);
        EXPECT_NEAR(r.metrics.bubble_fraction, static_cast<double>(bubble_ns) / r.metrics.period_ns, 1e-12);
      }
    }
  }
}

// The same pipeline under 1F1B-flush (B = I + W): (N-1)(F+I+W), so H1 saves 2(N-1)W.
TEST(ZbH1, SavesTwoWPerStageOverOneFOneB) {
  const Costs c{1'500'000, 1'200'000, 1 * kOneMsNs};
  for (int n : stage_counts()) {
    const int m = 2 * n;
    SCOPED_TRACE(fmt::format("N={} m={}", n, m));
    const SimulationResult flush = run_schedule(zb_scenario(n, m, c, "barrier", 3), "1f1b-flush");
    const SimulationResult h1 = run_schedule(zb_scenario(n, m, c, "barrier", 3), "zb-h1");
    EXPECT_EQ(flush.metrics.zb_bubble_ns, (n - 1) * (c.forward_ns + c.input_ns + c.weight_ns));
    EXPECT_EQ(flush.metrics.zb_bubble_ns - h1.metrics.zb_bubble_ns, 2 * (n - 1) * c.weight_ns);
  }
}

// Outside the range (W > F) nothing fills stage 1's wait for its first gradient.
TEST(ZbH1, BubbleIsStageOneWaitWhenWExceedsF) {
  for (const Costs& c : std::vector<Costs>{{1 * kOneMsNs, 1 * kOneMsNs, 2 * kOneMsNs},
                                           {1 * kOneMsNs, 3 * kOneMsNs, 1'500'000}}) {
    for (int n : stage_counts()) {
      SCOPED_TRACE(fmt::format("N={} F={} I={} W={} ns", n, c.forward_ns, c.input_ns, c.weight_ns));
      const SimulationResult r = run_schedule(zb_scenario(n, 2 * n, c, "barrier", 3), "zb-h1");
      expect_zb_bubble(r, 2 * n, c, (n - 1) * c.input_ns);
    }
  }
}

// ZB-H2 over one batch with optimizer post-validation, so the closed form reads as the paper states it
// for the parallelogram: stage N finishes (N-1)F after stage 1, and a barrier before U would add that
// wait to the spans (the metrics count the U ops of the batch).
TEST(ZbH2, BubbleIsNMinus1TimesFPlusIMinus2W) {
  const std::vector<Costs> costs = {
      {1 * kOneMsNs, 1 * kOneMsNs, 1 * kOneMsNs}, {2 * kOneMsNs, 2 * kOneMsNs, 1 * kOneMsNs},
      {1'500'000, 1'200'000, 1 * kOneMsNs},       {1 * kOneMsNs, 2 * kOneMsNs, 1 * kOneMsNs},
      {2 * kOneMsNs, 1 * kOneMsNs, 1 * kOneMsNs}, {3 * kOneMsNs, 1 * kOneMsNs, 2 * kOneMsNs},
      {3 * kOneMsNs, 2 * kOneMsNs, 500'000}};
  for (const Costs& c : costs) {
    for (int n : stage_counts()) {
      for (int m : {2 * n - 1, 2 * n, 3 * n}) {
        SCOPED_TRACE(fmt::format("N={} m={} F={} I={} W={} ns", n, m, c.forward_ns, c.input_ns, c.weight_ns));
        const SimulationResult r = run_schedule(zb_scenario(n, m, c, "post-validation", 1), "zb-h2");
        expect_zb_bubble(r, m, c, (n - 1) * (c.forward_ns + c.input_ns - 2 * c.weight_ns));
      }
    }
  }
}

// With W <= F but 2W > F+I the formula goes negative; the schedule is then bubble-free.
TEST(ZbH2, NoBubbleWhenTwoWExceedsFPlusI) {
  for (const Costs& c : std::vector<Costs>{{3 * kOneMsNs, 1 * kOneMsNs, 2'500'000},
                                           {2 * kOneMsNs, 1 * kOneMsNs, 2 * kOneMsNs}}) {
    for (int n : stage_counts()) {
      SCOPED_TRACE(fmt::format("N={} F={} I={} W={} ns", n, c.forward_ns, c.input_ns, c.weight_ns));
      const SimulationResult r = run_schedule(zb_scenario(n, 2 * n - 1, c, "post-validation", 1), "zb-h2");
      expect_zb_bubble(r, 2 * n - 1, c, 0);
    }
  }
}

// In flight (F run, I not yet): 1F1B's N-i+1 for H1, 2N-2i+1 for H2 (stage i 1-based), or m if fewer.
// Activations (M_B = 10 bytes, of which M_W = 3 stay until W): stage i also holds the weight-gradient
// inputs of its deferred W's, i-1 of them in H1 and 2(i-1) in H2, so stage 1 peaks at N*M_B (H1) and
// (2N-1)*M_B (H2) and no stage exceeds that.
TEST(ZbHandcrafted, InFlightAndActivationPeaks) {
  const Costs c{1 * kOneMsNs, 1 * kOneMsNs, 1 * kOneMsNs};
  constexpr Bytes kMb = 10;
  constexpr Bytes kMw = 3;
  for (int n : {1, 2, 3, 4, 6, 8}) {
    for (int m = 1; m <= 3 * n; ++m) {
      SCOPED_TRACE(fmt::format("N={} m={}", n, m));
      const SimulationResult h1 = run_schedule(zb_scenario(n, m, c, "barrier", 2), "zb-h1");
      const SimulationResult h2 = run_schedule(zb_scenario(n, m, c, "barrier", 2), "zb-h2");
      for (int i = 1; i <= n; ++i) {
        const int h1_in_flight = n - i + 1;
        const int h2_in_flight = 2 * n - 2 * i + 1;
        EXPECT_EQ(h1.metrics.devices[i - 1].peak_in_flight, std::min(h1_in_flight, m)) << "H1 stage " << i;
        EXPECT_EQ(h2.metrics.devices[i - 1].peak_in_flight, std::min(h2_in_flight, m)) << "H2 stage " << i;
        if (m >= n) {
          EXPECT_EQ(h1.metrics.devices[i - 1].peak_activation_bytes, h1_in_flight * kMb + (i - 1) * kMw)
              << "H1 stage " << i;
        }
        if (m >= 2 * n - 1) {
          EXPECT_EQ(h2.metrics.devices[i - 1].peak_activation_bytes, h2_in_flight * kMb + 2 * (i - 1) * kMw)
              << "H2 stage " << i;
        }
        EXPECT_LE(h1.metrics.devices[i - 1].peak_activation_bytes, n * kMb) << "H1 stage " << i;
        EXPECT_LE(h2.metrics.devices[i - 1].peak_activation_bytes, (2 * n - 1) * kMb) << "H2 stage " << i;
      }
    }
  }
}

}  // namespace
}  // namespace pipesim
