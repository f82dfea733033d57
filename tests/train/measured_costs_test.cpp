// Costs measured by an executor run, fed back to replay mode's virtual clocks.
#include "executor/costs/measured_costs.h"

#include <gtest/gtest.h>

#include <map>

#include "executor/replay_executor.h"
#include "tests/train/executor_test_util.h"

namespace pipesim::executor {
namespace {

using namespace test;

ExecutedOp timed(OpKind kind, int stage, TimeNs start_ns, TimeNs end_ns) {
  ExecutedOp op;
  op.action = {kind, false, stage, 0};
  op.start_ns = start_ns;
  op.end_ns = end_ns;
  return op;
}

TEST(ExecutorMeasuredCosts, MeanPerKindAndStageRoundedToTheNanosecond) {
  const PlannedRun run = plan_small("gpipe");
  const std::vector<ExecutedOp> ops{timed(OpKind::F, 0, 0, 5),   timed(OpKind::F, 0, 10, 11),
                                    timed(OpKind::F, 0, 20, 23), timed(OpKind::B, 1, 0, 4),
                                    timed(OpKind::B, 1, 10, 12), timed(OpKind::I, 1, 0, 1),
                                    timed(OpKind::I, 1, 0, 2)};
  const MeasuredCostModel costs(ops, 4, *run.costs);
  EXPECT_EQ(costs.duration(forward(0, 7)), 3);             // {5, 1, 3}
  EXPECT_EQ(costs.duration(backward(1, 0)), 3);            // {4, 2}
  EXPECT_EQ(costs.duration({OpKind::I, false, 1, 0}), 2);  // {1, 2}: 1.5 rounds up
  EXPECT_EQ(costs.duration(forward(1, 0)), 0);             // never ran
  EXPECT_EQ(costs.activation_bytes(2), run.costs->activation_bytes(2));
}

TEST(ExecutorMeasuredCosts, ReplayWithCostsMeasuredFromAReplayReproducesItsTimes) {
  // A replay's op durations are the scenario's constants per (kind, stage), so their means are too, and
  // replaying with them must give the same trace.
  PlannedRun first = plan_small("zb-h1");
  const ExecutionResult original = execute_replay(first.plan, *first.costs, *first.comm, small_setup());
  const MeasuredCostModel measured(original.ops, first.stages, *first.costs);
  PlannedRun second = plan_small("zb-h1");
  const ExecutionResult again = execute_replay(second.plan, measured, *second.comm, small_setup());
  ASSERT_EQ(again.ops.size(), original.ops.size());
  for (std::size_t i = 0; i < original.ops.size(); ++i) {
    EXPECT_EQ(again.ops[i].action, original.ops[i].action) << i;
    EXPECT_EQ(again.ops[i].start_ns, original.ops[i].start_ns) << i;
    EXPECT_EQ(again.ops[i].end_ns, original.ops[i].end_ns) << i;
  }
}

TEST(ExecutorMeasuredCosts, PerOpCostsAreEachOpsOwnCpuTimeWithTheMeanForOthers) {
  const PlannedRun run = plan_small("gpipe");
  std::vector<ExecutedOp> ops{timed(OpKind::F, 0, 0, 100), timed(OpKind::F, 0, 200, 300),
                              timed(OpKind::F, 0, 400, 500)};
  const TimeNs cpu[] = {7, 3, 6};
  for (int i = 0; i < 3; ++i) {
    ops[i].action.microbatch = i;
    ops[i].thread_cpu_ns = cpu[i];
  }
  const PerOpCostModel costs(ops, 4, *run.costs);
  EXPECT_EQ(costs.duration(forward(0, 0)), 7);  // the op's own time, not the wall span (100)
  EXPECT_EQ(costs.duration(forward(0, 1)), 3);
  EXPECT_EQ(costs.duration(forward(0, 2)), 6);
  EXPECT_EQ(costs.duration(forward(0, 9)), 5);  // not measured: the mean of the CPU times {7, 3, 6}
  EXPECT_EQ(costs.activation_bytes(1), run.costs->activation_bytes(1));
}

TEST(ExecutorMeasuredCosts, ReplayOnPerOpCostsKeepsEveryOpsMeasuredDuration) {
  // Replay records each op's thread CPU time; replaying on those gives every op exactly that duration, and a
  // static schedule's numerics do not depend on the clock.
  PlannedRun first = plan_small("1f1b-flush");
  const ExecutionResult measuring = execute_replay(first.plan, *first.costs, *first.comm, small_setup());
  for (const ExecutedOp& op : measuring.ops) EXPECT_GT(op.thread_cpu_ns, 0) << describe(op.action);
  const PerOpCostModel measured(measuring.ops, first.stages, *first.costs);
  PlannedRun second = plan_small("1f1b-flush");
  const ExecutionResult replayed = execute_replay(second.plan, measured, *second.comm, small_setup());
  ASSERT_EQ(replayed.ops.size(), measuring.ops.size());
  for (const ExecutedOp& op : replayed.ops) {
    EXPECT_EQ(op.end_ns - op.start_ns, measured.duration(op.action)) << describe(op.action);
  }
  EXPECT_EQ(replayed.final_parameters, measuring.final_parameters);
  EXPECT_EQ(replayed.losses, measuring.losses);
}

TEST(ExecutorMeasuredCosts, ResampledCostsDrawEachOpFromItsKindAndStagesDurations) {
  const PlannedRun run = plan_small("gpipe");
  const std::vector<ExecutedOp> ops{timed(OpKind::F, 0, 0, 10), timed(OpKind::F, 0, 0, 20),
                                    timed(OpKind::F, 0, 0, 30), timed(OpKind::F, 0, 0, 40),
                                    timed(OpKind::B, 2, 0, 7)};
  const ResampledCostModel costs(ops, 4, *run.costs, 1);
  std::map<TimeNs, int> drawn;
  double sum = 0;
  constexpr int kDraws = 4000;
  for (int mb = 0; mb < kDraws; ++mb) {
    const TimeNs d = costs.duration(forward(0, mb));
    ++drawn[d];
    sum += static_cast<double>(d);
    EXPECT_EQ(costs.duration(forward(0, mb)), d);  // the same op always draws the same
  }
  // Every draw is one of the measured durations, each about as often as the others, so the mean is kept.
  ASSERT_EQ(drawn.size(), 4u);
  for (const auto& [duration, count] : drawn) {
    EXPECT_TRUE(duration == 10 || duration == 20 || duration == 30 || duration == 40) << duration;
    EXPECT_NEAR(count, kDraws / 4, kDraws / 20) << duration;
  }
  EXPECT_NEAR(sum / kDraws, 25, 1);
  EXPECT_EQ(costs.duration(backward(2, 5)), 7);  // a single sample is every draw
  EXPECT_EQ(costs.duration(forward(1, 0)), 0);   // never ran
  EXPECT_EQ(costs.transfer_bytes(1), run.costs->transfer_bytes(1));
  // Another seed draws another sequence.
  const ResampledCostModel other(ops, 4, *run.costs, 2);
  int differing = 0;
  for (int mb = 0; mb < 64; ++mb)
    differing += other.duration(forward(0, mb)) != costs.duration(forward(0, mb));
  EXPECT_GT(differing, 16);
}

}  // namespace
}  // namespace pipesim::executor
