// DualPipeV: its op order against PyTorch's generator (ScheduleDualPipeV, worked from its code) with the
// fused F&B cells, the CSV round trip, runs for every m >= 2N with uneven costs, and what fusing buys when
// the overlapped slot is shorter than F + B (the steady period, with the scenario's check of the overlap, is
// the api's: tests/api/dualpipe_v_scenario_test.cpp). A device's costs are split over its two chunks.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "schedules/pytorch_csv.h"
#include "schedules/registry.h"
#include "schedules/zb_handcrafted.h"
#include "tests/schedules/schedule_runs.h"

namespace pipesim {
namespace {

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

test::ScheduleRunSpec dualpipe_v_run(int devices, int microbatches) {
  return test::ScheduleRunSpec("dualpipe-v", devices, microbatches, /*batches=*/1);
}

// Every m from 2N on runs to the end (no deadlock: a fused pair waits for both its ops), every op once; fewer
// microbatches are refused naming the rule.
TEST(DualPipeV, RunsEveryMFrom2NAndRefusesFewer) {
  for (int n : {2, 3, 4, 5}) {
    for (int m = 2 * n - 1; m <= 4 * n; ++m) {
      SCOPED_TRACE(fmt::format("N={} m={}", n, m));
      // A device's F = 1.5, I = 1.25, W = 0.75 ms, M_B = 10, M_W = 3, over its two chunks; 0.1 ms comm.
      const test::UniformStageCosts costs =
          test::UniformStageCosts::ms(1.5, 1.25, 0.75).bytes(10, 3).over_chunks(2);
      test::ScheduleRunSpec run = dualpipe_v_run(n, m);
      run.latency_ns = ms_to_ns(0.1);
      if (m < 2 * n) {
        try {
          test::run_schedule_plan(run, costs);
          ADD_FAILURE() << "no error";
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find("needs at least 2N"), std::string::npos) << e.what();
        }
        continue;
      }
      const RunTrace trace = test::run_schedule_plan(run, costs);
      size_t ops = 0;
      for (const auto& list : dualpipe_v_lists(n, m)) ops += list.size();
      EXPECT_EQ(trace.ops.size(), ops + 2 * n);  // and one U per stage
      EXPECT_GT(test::whole_run_metrics(trace, m, run.batches).throughput_samples_per_s, 0);
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
      // A device's F = I = W = 1 ms and overlap_fb_ms over its two chunks, no comm, a barrier before the
      // steps.
      test::ScheduleRunSpec run = dualpipe_v_run(n, m);
      run.sync = OptimizerSync::kBarrier;
      const RunTrace trace = test::run_schedule_plan(
          run,
          test::UniformStageCosts::ms(1, 1, 1).bytes(1'000'000, 0).overlap_fb_ms(overlap).over_chunks(2));
      const TimeNs idle_max_ns = test::most_idle_device_ns(trace);
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
