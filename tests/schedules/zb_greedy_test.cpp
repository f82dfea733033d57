// zb-1p / zb-2p, the Zero Bubble greedy scheduler (schedules/zb_greedy.h), on costs stated per stage: its
// lists for a pipeline worked by hand and the engine's timeline of them, the problem it builds from each
// link's latency, and its parameters. The steady runs' bubbles and periods: tests/api/zb_greedy_test.cpp.
#include "schedules/zb_greedy.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>

#include "base/errors.h"
#include "sim/comm_model.h"
#include "tests/schedules/schedule_runs.h"

namespace pipesim {
namespace {

std::vector<std::string> zb_greedy_letters(const ActionList& list) {
  std::vector<std::string> out;
  for (const Action& a : list) out.push_back(fmt::format("{}{}", op_letter(a.kind), a.microbatch));
  return out;
}

// Hand-worked: N=2, m=4, F=I=W=1 ms, no comm, 1p (2 M_B per stage), M_W = M_B/2.
//   warm-up     stage 2 runs one F; stage 1 two (F1 ends at 2 <= 3, when I0's gradient arrives)
//   stage 1     I0 waits for the gradient until 3; F2 needs 2.5 M_B, so W0 first; likewise W1 before F3;
//               I3's gradient comes 1 ms (= W) after I2 ends, so W2 fills that gap; W3 is left over
//   stage 2     W0 fills the 1 ms wait for F2, W1 the wait for F3; W2, W3 left over
// Every flag setting gives these lists (no gap is shorter than W, no stage is two forwards ahead).
TEST(ZbGreedy, HandWorkedListsForTwoStages) {
  const test::UniformStageCosts costs = test::UniformStageCosts::ms(1, 1, 1).bytes(2000, 1000);
  PipelineSpec spec;
  spec.devices = 2;
  spec.microbatches = 4;
  const ZbProblem problem = make_zb_problem(spec, costs, 1.0);
  EXPECT_EQ(problem.stages[0].limit_bytes, 4000);
  for (int index = 0; index < kZbFlagCombinations; ++index) {
    const std::optional<ZbGreedyPlan> plan = zb_greedy_schedule(problem, ZbFlags::from_index(index));
    ASSERT_TRUE(plan);
    const DeviceActionLists& lists = plan->lists;
    SCOPED_TRACE(fmt::format("flags {}", index));
    EXPECT_EQ(zb_greedy_letters(lists[0]), (std::vector<std::string>{"F0", "F1", "I0", "W0", "F2", "I1", "W1",
                                                                     "F3", "I2", "W2", "I3", "W3"}));
    EXPECT_EQ(zb_greedy_letters(lists[1]), (std::vector<std::string>{"F0", "I0", "F1", "I1", "W0", "F2", "I2",
                                                                     "W1", "F3", "I3", "W2", "W3"}));
  }
  // The engine runs the lists on exactly the predicted timeline (one batch under a barrier: every batch
  // alike).
  const RunTrace trace = test::run_schedule_plan(
      test::ScheduleRunSpec("zb-1p", 2, 4, /*batches=*/1).with_sync(OptimizerSync::kBarrier), costs);
  EXPECT_EQ(test::timeline(trace, 0, 0, 4),
            (std::vector<std::string>{"F0@0", "F1@1", "I0@3", "W0@4", "F2@5", "I1@6", "W1@7", "F3@8", "I2@9",
                                      "W2@10", "I3@11", "W3@12", "U@13"}));
  EXPECT_EQ(test::timeline(trace, 1, 0, 4),
            (std::vector<std::string>{"F0@1", "I0@2", "F1@3", "I1@4", "W0@5", "F2@6", "I2@7", "W1@8", "F3@9",
                                      "I3@10", "W2@11", "W3@12", "U@13"}));
  EXPECT_EQ(test::whole_run_metrics(trace, 4, 1).devices[0].peak_activation_bytes, 4000);
}

TEST(ZbGreedy, PlansWithEachLinksLatency) {
  test::StageCostLists lists;
  lists.forward_ns = lists.input_ns = lists.weight_ns = {1};
  lists.activation_bytes = {10};
  lists.transfer_bytes = {1000, 3000, 0};
  const test::PerStageCosts costs(lists);
  PipelineSpec spec;
  spec.devices = 3;
  spec.microbatches = 3;
  spec.make_comm = [] { return std::make_unique<LinkComm>(3, 2.0, 7); };  // 2 bytes/ns, 7 ns latency
  const ZbProblem problem = make_zb_problem(spec, costs, 1.5);
  EXPECT_EQ(problem.stages[0].forward_send_ns, 500 + 7);
  EXPECT_EQ(problem.stages[1].backward_send_ns, 500 + 7);  // the boundary's size, both ways
  EXPECT_EQ(problem.stages[1].forward_send_ns, 1500 + 7);
  EXPECT_EQ(problem.stages[2].backward_send_ns, 1500 + 7);
  EXPECT_EQ(problem.stages[2].limit_bytes, 45);  // 1.5 * 3 * 10
}

TEST(ZbGreedy, ParametersAndLabels) {
  // N = 4, m = 8, F = I = W = 1 ms, M_W = M_B / 2, a barrier before the steps, two batches.
  const test::UniformStageCosts costs = test::UniformStageCosts::ms(1, 1, 1).bytes(1'000'000, 500'000);
  const auto run = [](const char* name) {
    return test::ScheduleRunSpec(name, 4, 8, /*batches=*/2).with_sync(OptimizerSync::kBarrier);
  };
  const auto label = [&](const test::ScheduleRunSpec& spec) {
    test::run_schedule_plan(spec, costs);
    return test::make_test_schedule(spec)->label();
  };
  EXPECT_EQ(label(run("zb-1p")), "zb-1p");
  EXPECT_EQ(label(run("zb-2p").param("memory_limit", "1.5")), "zb-2p(memory_limit=1.5)");
  // Below 1F1B's N * M_B the greedy has no list: a clear error, not an internal one.
  for (const char* limit : {"0.2", "0.5", "0.875"}) {
    try {
      test::run_schedule_plan(run("zb-1p").param("memory_limit", limit), costs);
      ADD_FAILURE() << "memory_limit " << limit << " accepted";
    } catch (const InputError& error) {
      EXPECT_NE(std::string(error.what()).find("is below 1 (N x M_B"), std::string::npos) << error.what();
    }
  }
  EXPECT_THROW(test::run_schedule_plan(run("zb-2p").param("memory_limit", "lots"), costs), InputError);
}

}  // namespace
}  // namespace pipesim
