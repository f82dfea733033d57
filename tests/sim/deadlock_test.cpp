// Deadlock detection and schedule-rule violations on hand-built per-device lists.
#include <gtest/gtest.h>

#include "base/errors.h"
#include "sim/engine/engine.h"
#include "tests/sim/plans.h"

namespace pipesim {
namespace {

// Runs per-device lists on a linear pipeline with F=1 ms, B=2 ms and no comm.
RunTrace run_lists(int devices, std::vector<std::vector<Action>> lists, int microbatches) {
  ExecutionPlan plan = test::plan_of_actions(PipelineLayout::linear(devices), std::move(lists), microbatches);
  return test::run_plan(plan, test::UniformStageCosts::ms(1.0, 2.0));
}

template <typename Error>
std::string error_of(int devices, std::vector<std::vector<Action>> lists, int microbatches) {
  try {
    run_lists(devices, std::move(lists), microbatches);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

// Device 1 insists on F(mb 1) first; device 0 runs F(mb 1) only after B(mb 0), whose gradient comes from
// device 1's B(mb 0), which device 1 runs after F(mb 1): a cycle. After F(stage 1, mb 0) ends at 1 ms nothing
// can move.
TEST(Deadlock, CycleNamesEachBlockedDeviceAndItsOp) {
  const std::string message =
      error_of<DeadlockError>(2,
                              {{forward(0, 0), backward(0, 0), forward(0, 1), backward(0, 1)},
                               {forward(1, 1), forward(1, 0), backward(1, 0), backward(1, 1)}},
                              2);
  EXPECT_NE(message.find("deadlock at 1.000000 ms"), std::string::npos) << message;
  EXPECT_NE(message.find("device 1 waits to run B(stage 1, mb 0)"), std::string::npos) << message;
  EXPECT_NE(message.find("gradient of mb 0 from stage 2"), std::string::npos) << message;
  EXPECT_NE(message.find("device 2 waits to run F(stage 2, mb 1)"), std::string::npos) << message;
  EXPECT_NE(message.find("F(stage 1, mb 1) has not run"), std::string::npos) << message;
}

// Device 0 reaches the barrier of step 0 at once; device 1 waits for a forward that device 0 never runs.
TEST(Deadlock, BarrierNamesTheMissingDevices) {
  const std::string message = error_of<DeadlockError>(
      2, {{optimizer_step(0, 0, true)}, {forward(1, 0), optimizer_step(1, 0, true)}}, 1);
  EXPECT_NE(message.find("device 1 waits to run U(stage 1, step 0, barrier)"), std::string::npos) << message;
  EXPECT_NE(message.find("which devices 2 have not reached"), std::string::npos) << message;
  EXPECT_NE(message.find("device 2 waits to run F(stage 2, mb 0)"), std::string::npos) << message;
}

// The same lists in a consistent order run to the end: the cycle above, not the ops, caused the deadlock.
TEST(Deadlock, ConsistentOrderRuns) {
  const RunTrace trace = run_lists(2,
                                   {{forward(0, 0), forward(0, 1), backward(0, 0), backward(0, 1)},
                                    {forward(1, 0), backward(1, 0), forward(1, 1), backward(1, 1)}},
                                   2);
  EXPECT_EQ(trace.ops.size(), 8u);
  // F0 0-1, F1 1-2 | F0 1-2, B0 2-4, F1 4-5, B1 5-7 | B0 4-6, B1 7-9.
  EXPECT_EQ(trace.makespan_ns, ms_to_ns(9));
}

TEST(ScheduleRules, OpOnTheWrongDevice) {
  const std::string message = error_of<ScheduleError>(2, {{forward(1, 0)}, {}}, 1);
  EXPECT_NE(message.find("device 1 asked for F(stage 2, mb 0), but that stage lives on device 2"),
            std::string::npos)
      << message;
}

TEST(ScheduleRules, OpRunTwice) {
  const std::string message = error_of<ScheduleError>(1, {{forward(0, 0), backward(0, 0), forward(0, 0)}}, 1);
  EXPECT_NE(message.find("device 1 asked for F(stage 1, mb 0) a second time"), std::string::npos) << message;
}

// W marks its half of the backward done like B does, so a repeated W is caught, not run twice.
TEST(ScheduleRules, WeightGradientRunTwice) {
  const std::string message = error_of<ScheduleError>(
      1, {{forward(0, 0), backward_input(0, 0), backward_weight(0, 0), backward_weight(0, 0)}}, 1);
  EXPECT_NE(message.find("device 1 asked for W(stage 1, mb 0) a second time"), std::string::npos) << message;
}

// Asking again for an op of a microbatch whose state the engine already dropped (every stage done, later
// microbatches in flight) gives the same error, not a stale read.
TEST(ScheduleRules, OpOfAFinishedMicrobatchRunTwice) {
  const std::string message = error_of<ScheduleError>(
      1, {{forward(0, 0), backward(0, 0), forward(0, 1), backward(0, 1), forward(0, 0)}}, 2);
  EXPECT_NE(message.find("device 1 asked for F(stage 1, mb 0) a second time"), std::string::npos) << message;
}

TEST(ScheduleRules, MicrobatchOutOfRange) {
  const std::string message = error_of<ScheduleError>(1, {{forward(0, 3)}}, 2);
  EXPECT_NE(message.find("F(stage 1, mb 3): microbatches are 0..1"), std::string::npos) << message;
}

}  // namespace
}  // namespace pipesim
