// DualPipe: two copies of the model in opposite directions over one set of devices. Its op order against
// DeepSeek's generator (deepseek-ai/DualPipe, step(), worked from its code), the bidirectional layout (each
// microbatch through one copy only), runs for every allowed m, the refusals, two copies of the weights per
// device, and the bubble of its README's table in closed form. The plans run on costs stated per stage
// (tests/schedules/schedule_runs.h); the weights held and the CSV export are the api's (tests/api/).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>

#include "base/errors.h"
#include "schedules/pytorch_csv.h"
#include "schedules/registry.h"
#include "schedules/schedule.h"
#include "schedules/zb_handcrafted.h"
#include "sim/engine/engine.h"
#include "sim/layout.h"
#include "tests/schedules/schedule_runs.h"

namespace pipesim {
namespace {

// Stage 2N-1-r is copy 2's stage N-1-r on device r; even microbatches flow down copy 1, odd ones up copy 2.
TEST(DualPipe, OrderEqualsDeepSeeksGenerator) {
  EXPECT_EQ(format_pytorch_csv(dualpipe_lists(2, 4)),
            "0F0,3F1,0F2,3B1,(3F3;0B0)OVERLAP_F_B,3B3,0I2,0W2\n"
            "2F1,1F0,2F3,1B0,(1F2;2B1)OVERLAP_F_B,1B2,2I3,2W3\n");
  EXPECT_EQ(format_pytorch_csv(dualpipe_lists(4, 8)),
            "0F0,0F2,0F4,7F1,7I1,7W1,7F3,(0F6;7B3)OVERLAP_F_B,(7F5;0B0)OVERLAP_F_B,7B5,(7F7;0B2)OVERLAP_F_B,"
            "7B7,0I4,0W4,0I6,0W6\n"
            "1F0,6F1,1F2,6F3,1F4,6B1,(6F5;1B0)OVERLAP_F_B,(1F6;6B3)OVERLAP_F_B,(6F7;1B2)OVERLAP_F_B,6B5,1B4,"
            "6I7,1I6,6W7,1W6\n"
            "5F1,2F0,5F3,2F2,5F5,2B0,(2F4;5B1)OVERLAP_F_B,(5F7;2B2)OVERLAP_F_B,(2F6;5B3)OVERLAP_F_B,2B4,5B5,"
            "2I6,5I7,2W6,5W7\n"
            "4F1,4F3,4F5,3F0,3I0,3W0,3F2,(4F7;3B2)OVERLAP_F_B,(3F4;4B1)OVERLAP_F_B,3B4,(3F6;4B3)OVERLAP_F_B,"
            "3B6,4I5,4W5,4I7,4W7\n");
}

TEST(DualPipe, LayoutHoldsOneStageOfEachCopyPerDevice) {
  const PipelineLayout layout = PipelineLayout::bidirectional(4);
  EXPECT_EQ(layout.placement_name(), "bidirectional");
  EXPECT_EQ(layout.pipelines, 2);
  EXPECT_EQ(layout.stages_per_pipeline(), 4);
  for (int r = 0; r < 4; ++r) EXPECT_EQ(layout.stages_on(r), (std::vector<int>{r, 7 - r}));
  EXPECT_TRUE(layout.is_first_stage(0));
  EXPECT_TRUE(layout.is_first_stage(4));  // copy 2 enters on device 3
  EXPECT_EQ(layout.device(4), 3);
  EXPECT_TRUE(layout.is_last_stage(3));
  EXPECT_TRUE(layout.is_last_stage(7));
  EXPECT_EQ(layout.model_stage(6), 2);
  EXPECT_TRUE(layout.visits(5, 3));
  EXPECT_FALSE(layout.visits(5, 2));
  EXPECT_EQ(layout.first_pipeline().device_of_stage, (std::vector<int>{0, 1, 2, 3}));
  // The same device_of_stage as a V, which is one pipeline: the names differ.
  EXPECT_EQ(PipelineLayout::v_shape(4).placement_name(), "v");
}

// F = I = W = 1 ms on every stage, M_B = 10, M_W = 3, no comm, a barrier before the steps, exactly one batch.
test::UniformStageCosts dualpipe_costs() {
  return test::UniformStageCosts::ms(1, 1, 1).bytes(10, 3);
}

test::ScheduleRunSpec dualpipe_run(int devices, int microbatches) {
  return test::ScheduleRunSpec("dualpipe", devices, microbatches, /*batches=*/1)
      .with_sync(OptimizerSync::kBarrier);
}

// Every even m from 2N on runs to the end with every op once; odd N, odd m and m < 2N are refused naming
// the rule.
TEST(DualPipe, RunsEveryEvenMFrom2NAndRefusesTheRest) {
  for (int n : {2, 3, 4, 6}) {
    for (int m = 2 * n - 2; m <= 4 * n + 1; ++m) {
      SCOPED_TRACE(fmt::format("N={} m={}", n, m));
      if (n % 2 != 0 || m % 2 != 0 || m < 2 * n) {
        try {
          test::run_schedule_plan(dualpipe_run(n, m), dualpipe_costs());
          ADD_FAILURE() << "no error";
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find(n % 2 != 0 ? "even number of devices" : "even m >= 2N"),
                    std::string::npos)
              << e.what();
        }
        continue;
      }
      const RunTrace trace = test::run_schedule_plan(dualpipe_run(n, m), dualpipe_costs());
      size_t ops = 0;
      int forwards = 0;
      for (const auto& list : dualpipe_lists(n, m)) {
        ops += list.size();
        for (const Action& a : list) forwards += a.kind == OpKind::F ? 1 : 0;
      }
      EXPECT_EQ(forwards, n * m);                // each microbatch through the N stages of its copy
      EXPECT_EQ(trace.ops.size(), ops + 2 * n);  // and one U per stage of each copy
      for (const OpRecord& op : trace.ops) {
        if (op.action.kind == OpKind::U) continue;
        EXPECT_TRUE(trace.layout.visits(op.action.stage, op.action.microbatch));
      }
    }
  }
}

// DualPipe's README: bubble (PP/2-1)(F&B + B - 3W), with F = I = W = 1 (B = 2), no comm and a fused slot of
// F&B: the most any device idles before its last op ends (each works 2 x m/2 x (F + B) = 3m; the middle
// devices idle longest once the slot is shorter than F + B, every device alike at F + B), for slots from no
// overlap (F&B = F + B) to full (F&B = B).
TEST(DualPipe, BubbleEqualsItsReadmeFormula) {
  for (int n : {2, 4, 6, 8}) {
    for (double overlap : {3.0, 2.5, 2.0}) {
      const int m = 2 * n + 4;
      SCOPED_TRACE(fmt::format("N={} m={} F&B={}", n, m, overlap));
      const RunTrace trace =
          test::run_schedule_plan(dualpipe_run(n, m), dualpipe_costs().overlap_fb_ms(overlap));
      std::vector<TimeNs> end_ns(n, 0);
      std::vector<TimeNs> busy_ns(n, 0);
      for (const OpRecord& op : trace.ops) {
        if (op.action.kind == OpKind::U) continue;
        end_ns[op.device] = std::max(end_ns[op.device], op.end_ns);
        busy_ns[op.device] += op.end_ns - op.start_ns;
      }
      const TimeNs idle_max_ns = test::most_idle_device_ns(trace);
      EXPECT_NEAR(ns_to_ms(idle_max_ns), (n / 2 - 1) * (overlap + 2 - 3), 1e-9);
      if (overlap == 3.0) {
        for (int d = 0; d < n; ++d) EXPECT_EQ(end_ns[d] - busy_ns[d], idle_max_ns) << "device " << d;
      }
    }
  }
}

// Without a barrier (post-validation) each stage's step waits for its copies only: a U of stage s at step k
// starts once every device holding a copy of s's piece of the model has run its ops of batch k, and never
// later than under the barrier, which waits for every device.
TEST(DualPipe, WithoutABarrierEachStepWaitsForItsCopiesOnly) {
  for (int n : {2, 4, 6}) {
    const int m = 2 * n + 2;
    SCOPED_TRACE(fmt::format("N={} m={}", n, m));
    const test::UniformStageCosts uneven =
        test::UniformStageCosts::ms(1, 1, 1, 0.5).bytes(10, 3).overlap_fb_ms(2.5);
    test::ScheduleRunSpec run = dualpipe_run(n, m);
    run.sync = OptimizerSync::kPostValidation;
    const std::unique_ptr<Schedule> schedule = test::make_test_schedule(run);
    EXPECT_EQ(test::schedule_spec(*schedule, run).sync, OptimizerSync::kPostValidation);
    const RunTrace trace = test::run_schedule_plan(run, uneven);
    const PipelineLayout& layout = trace.layout;
    std::map<std::pair<int, int>, TimeNs> batch_end_ns;  // (device, batch) -> end of its last op of the batch
    for (const OpRecord& op : trace.ops) {
      if (op.action.kind == OpKind::U) continue;
      TimeNs& end = batch_end_ns[{op.device, op.action.microbatch / m}];
      end = std::max(end, op.end_ns);
    }
    int steps = 0;
    for (const OpRecord& op : trace.ops) {
      if (op.action.kind != OpKind::U) continue;
      ++steps;
      for (int copy = 0; copy < 2; ++copy) {
        const int twin = copy * n + layout.model_stage(op.action.stage);
        EXPECT_LE(batch_end_ns.at({layout.device(twin), op.action.microbatch}), op.start_ns)
            << describe(op.action) << " before device " << layout.device(twin) << " finished its batch";
      }
    }
    EXPECT_EQ(steps, 2 * n * run.batches);
    test::ScheduleRunSpec barrier = run;
    barrier.sync = OptimizerSync::kBarrier;
    EXPECT_GE(test::whole_run_metrics(trace, m, run.batches).throughput_samples_per_s,
              test::whole_run_metrics(test::run_schedule_plan(barrier, uneven), m, barrier.batches)
                  .throughput_samples_per_s);
  }
}

TEST(DualPipe, AMicrobatchOnTheOtherCopysStageIsAnError) {
  const PipelineLayout layout = PipelineLayout::bidirectional(2);
  const test::UniformStageCosts costs = test::UniformStageCosts::ms(1, 2);
  ExecutionPlan plan = plan_from_lists(layout, {{forward(0, 1)}, {}}, 2);
  try {
    test::run_plan(plan, costs);
    ADD_FAILURE() << "no error";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("microbatch 1 flows through pipeline 2 of 2, stages 3..4"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pipesim
