// DualPipeV: its op order against PyTorch's generator (ScheduleDualPipeV, worked from its code) with the
// fused F&B cells, the CSV round trip, runs for every m >= 2N with uneven costs, and what fusing buys when
// the overlapped slot is shorter than F + B.
#include <gtest/gtest.h>

#include "schedules/pytorch_csv.h"
#include "schedules/registry.h"
#include "schedules/zb_handcrafted.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::run_schedule;
using test::scenario_from_yaml;

TEST(DualPipeV, OrderEqualsPyTorchsGenerator) {
  EXPECT_EQ(format_pytorch_csv(dualpipe_v_lists(2, 4)),
            "0F0,0F1,0F2,3F0,3I0,3W0,3F1,(0F3;3B1)OVERLAP_F_B,(3F2;0B0)OVERLAP_F_B,3B2,(3F3;0B1)OVERLAP_F_B,"
            "3B3,0I2,0W2,0I3,0W3\n"
            "1F0,2F0,1F1,2F1,1F2,2B0,(2F2;1B0)OVERLAP_F_B,(1F3;2B1)OVERLAP_F_B,(2F3;1B1)OVERLAP_F_B,2B2,1B2,"
            "2I3,1I3,2W3,1W3\n");
  EXPECT_EQ(format_pytorch_csv(dualpipe_v_lists(4, 10)),
            "0F0,0F1,0F2,0F3,0F4,0F5,0F6,7F0,7I0,7W0,7F1,7I1,7W1,7F2,7I2,7W2,7F3,(0F7;7B3)OVERLAP_F_B,(7F4;"
            "0B0)OVERLAP_F_B,(0F8;7B4)OVERLAP_F_B,(7F5;0B1)OVERLAP_F_B,(0F9;7B5)OVERLAP_F_B,(7F6;0B2)OVERLAP_"
            "F_B,7B6,(7F7;0B3)OVERLAP_F_B,7B7,(7F8;0B4)OVERLAP_F_B,7B8,(7F9;0B5)OVERLAP_F_B,7B9,0I6,0W6,0I7,"
            "0W7,0I8,0W8,0I9,0W9\n"
            "1F0,1F1,1F2,1F3,1F4,6F0,1F5,6F1,6I0,6W0,6F2,6I1,6W1,6F3,(1F6;6B2)OVERLAP_F_B,(6F4;1B0)OVERLAP_F_"
            "B,(1F7;6B3)OVERLAP_F_B,(6F5;1B1)OVERLAP_F_B,(1F8;6B4)OVERLAP_F_B,(6F6;1B2)OVERLAP_F_B,(1F9;6B5)"
            "OVERLAP_F_B,(6F7;1B3)OVERLAP_F_B,6B6,(6F8;1B4)OVERLAP_F_B,6B7,(6F9;1B5)OVERLAP_F_B,6B8,1B6,6I9,"
            "1I7,6W9,1I8,1W7,1I9,1W8,1W9\n"
            "2F0,2F1,2F2,5F0,2F3,5F1,2F4,5F2,5I0,5W0,5F3,(2F5;5B1)OVERLAP_F_B,(5F4;2B0)OVERLAP_F_B,(2F6;5B2)"
            "OVERLAP_F_B,(5F5;2B1)OVERLAP_F_B,(2F7;5B3)OVERLAP_F_B,(5F6;2B2)OVERLAP_F_B,(2F8;5B4)OVERLAP_F_B,"
            "(5F7;2B3)OVERLAP_F_B,(2F9;5B5)OVERLAP_F_B,(5F8;2B4)OVERLAP_F_B,5B6,(5F9;2B5)OVERLAP_F_B,5B7,2B6,"
            "5B8,2I7,5I9,2I8,2W7,2I9,5W9,2W8,2W9\n"
            "3F0,4F0,3F1,4F1,3F2,4F2,3F3,4F3,3F4,4B0,(4F4;3B0)OVERLAP_F_B,(3F5;4B1)OVERLAP_F_B,(4F5;3B1)"
            "OVERLAP_F_B,(3F6;4B2)OVERLAP_F_B,(4F6;3B2)OVERLAP_F_B,(3F7;4B3)OVERLAP_F_B,(4F7;3B3)OVERLAP_F_B,"
            "(3F8;4B4)OVERLAP_F_B,(4F8;3B4)OVERLAP_F_B,(3F9;4B5)OVERLAP_F_B,(4F9;3B5)OVERLAP_F_B,4B6,3B6,4B7,"
            "3B7,4I8,3I8,4I9,3I9,4W8,3W8,4W9,3W9\n");
}

// PyTorch's own file for it reads back to the same lists (fused pairs included), which run.
TEST(DualPipeV, ItsPyTorchCsvReadsBackAndRuns) {
  const DeviceActionLists lists = dualpipe_v_lists(3, 8);
  const PytorchCsvSchedule csv = parse_pytorch_csv(format_pytorch_csv(lists), "dualpipev.csv");
  EXPECT_EQ(csv.actions, lists);
  EXPECT_EQ(csv.layout().placement_name(), "v");
}

Scenario uniform(int devices, int microbatches, double f_ms, double i_ms, double w_ms, double comm_ms) {
  return scenario_from_yaml(
      fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: 1}}\n"
                  "costs: {{forward_ms: {}, backward_input_ms: {}, backward_weight_ms: {}, comm_ms: {},\n"
                  "        activation_bytes: 10, weight_grad_activation_bytes: 3}}\n",
                  devices, microbatches, f_ms, i_ms, w_ms, comm_ms));
}

// Every m from 2N on runs to the end (no deadlock: a fused pair waits for both its ops), every op once; fewer
// microbatches are refused naming the rule.
TEST(DualPipeV, RunsEveryMFrom2NAndRefusesFewer) {
  for (int n : {2, 3, 4, 5}) {
    for (int m = 2 * n - 1; m <= 4 * n; ++m) {
      SCOPED_TRACE(fmt::format("N={} m={}", n, m));
      const Scenario scenario = uniform(n, m, 1.5, 1.25, 0.75, 0.1);
      if (m < 2 * n) {
        try {
          run_schedule(scenario, "dualpipe-v");
          ADD_FAILURE() << "no error";
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find("needs at least 2N"), std::string::npos) << e.what();
        }
        continue;
      }
      const SimulationResult r = run_schedule(scenario, "dualpipe-v", {}, test::fixed_batches());
      size_t ops = 0;
      for (const auto& list : dualpipe_v_lists(n, m)) ops += list.size();
      EXPECT_EQ(r.trace.ops.size(), ops + 2 * n);  // and one U per stage
      EXPECT_GT(r.metrics.throughput_samples_per_s, 0);
    }
  }
}

// DualPipe's point: a fused slot shorter than F + B (costs.overlap_fb_ms) shortens the steady phase, and only
// it: with the slot at F + B the run equals the one without the key. The key is checked against the physics
// of overlap (no shorter than the longer op, no longer than both).
TEST(DualPipeV, AnOverlappedSlotShorterThanFPlusBIsFaster) {
  const auto period = [](const std::string& overlap) {
    const Scenario scenario = scenario_from_yaml(
        "pipeline: {stages: 4, microbatches: 16}\n"
        "costs: {forward_ms: 2, backward_input_ms: 2, backward_weight_ms: 2, comm_ms: 0.1" +
        overlap + "}\n");
    return run_schedule(scenario, "dualpipe-v").metrics.period_ns;
  };
  EXPECT_EQ(period(", overlap_fb_ms: 6"), period(""));
  EXPECT_LT(period(", overlap_fb_ms: 4.5"), period(""));
  EXPECT_LT(period(", overlap_fb_ms: 4"), period(", overlap_fb_ms: 4.5"));
  for (const char* bad : {", overlap_fb_ms: 3.9", ", overlap_fb_ms: 6.1"}) {
    try {
      period(bad);
      ADD_FAILURE() << "no error for" << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("costs.overlap_fb_ms"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("between max(F, B) = 4 ms and F + B = 6 ms on device 1"),
                std::string::npos)
          << e.what();
    }
  }
}

// DualPipe's README gives DualPipeV the bubble of DualPipe on twice the ranks: with N devices (a DualPipe of
// 2N ranks folded), (N-1)(F&B + B - 3W) in one chunk's op times, the most any device idles before its last op
// ends. A device's costs split over its two chunks, so F = I = W = 1 per device is 0.5 per chunk (B = 1) and
// the slot is half of overlap_fb_ms; slots from no overlap (F&B = F + B) to full (F&B = B).
TEST(DualPipeV, BubbleEqualsDualPipesReadmeFormula) {
  for (int n : {2, 3, 4, 6}) {
    for (double overlap : {3.0, 2.5, 2.0}) {
      const int m = 2 * n + 4;
      SCOPED_TRACE(fmt::format("N={} m={} F&B={}", n, m, overlap));
      const Scenario scenario =
          scenario_from_yaml(fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: 1}}\n"
                                         "costs: {{forward_ms: 1, backward_input_ms: 1, backward_weight_ms: "
                                         "1, comm_ms: 0, overlap_fb_ms: {}}}\n"
                                         "optimizer: {{sync: barrier}}\n",
                                         n, m, overlap));
      const SimulationResult r = run_schedule(scenario, "dualpipe-v", {}, test::fixed_batches());
      const TimeNs idle_max_ns = test::most_idle_device_ns(r.trace);
      const double fb = overlap / 2, backward = 1.0, weight = 0.5;  // one chunk's
      EXPECT_NEAR(ns_to_ms(idle_max_ns), (n - 1) * (fb + backward - 3 * weight), 1e-9);
    }
  }
}

TEST(DualPipeV, PyTorchNameSelectsIt) {
  EXPECT_EQ(make_schedule("ScheduleDualPipeV", ScheduleParams("test"))->label(), "dualpipe-v");
}

}  // namespace
}  // namespace pipesim
