// The engine's fused F&B pairs (Action::fused_with_next) from hand-built lists: what a pair may hold, and
// that the one-pass timings leave fused lists to the engine.
#include <gtest/gtest.h>

#include "base/errors.h"
#include "schedules/schedule.h"
#include "sim/engine/engine.h"
#include "sim/fast/static_list_timing.h"
#include "tests/cost_models/uniform_costs.h"

namespace pipesim {
namespace {

Action fused(Action f) {
  f.fused_with_next = true;
  return f;
}

std::string run_error(DeviceActionLists lists) {
  const PipelineLayout layout = PipelineLayout::linear(2);
  const ExplicitCostModel costs = test::uniform_costs(layout, 1.0, 2.0);
  FixedLatencyComm comm({0, 0});
  ExecutionPlan plan = plan_from_lists(layout, std::move(lists), 2);
  try {
    simulate(plan, costs, comm);
  } catch (const ScheduleError& e) {
    return e.what();
  }
  return "no error";
}

TEST(FusedOps, APairIsAForwardAndAnotherMicrobatchsBackward) {
  const Action f0 = forward(0, 0), f1 = forward(0, 1), b0 = backward(0, 0), b1 = backward(0, 1);
  const ActionList last = {forward(1, 0), backward(1, 0), forward(1, 1), backward(1, 1)};
  EXPECT_NE(run_error({{f0, f1, fused(b0), b1}, last}).find("only a forward overlaps"), std::string::npos);
  EXPECT_NE(run_error({{f0, b0, f1, fused(b1)}, last}).find("is fused with the next op"), std::string::npos);
  EXPECT_NE(run_error({{f0, fused(f1), f1, b0, b1}, last}).find("must be a B or I of another microbatch"),
            std::string::npos);
  EXPECT_NE(run_error({{f0, fused(f1), b1, b0}, last}).find("cannot overlap its own forward"),
            std::string::npos);
  EXPECT_EQ(run_error({{f0, fused(f1), b0, b1}, last}), "no error");
}

TEST(FusedOps, OnePassTimingLeavesFusedListsToTheEngine) {
  const PipelineLayout layout = PipelineLayout::linear(2);
  const ExplicitCostModel costs = test::uniform_costs(layout, 1.0, 2.0);
  const DeviceActionLists plain = {{forward(0, 0), forward(0, 1), backward(0, 0), backward(0, 1)},
                                   {forward(1, 0), backward(1, 0), forward(1, 1), backward(1, 1)}};
  DeviceActionLists with_pair = plain;
  with_pair[0][1].fused_with_next = true;
  EXPECT_TRUE(time_static_lists({layout, plain, 2, BackwardReads::kCurrentWeights, {0, 0}}, costs));
  EXPECT_FALSE(time_static_lists({layout, with_pair, 2, BackwardReads::kCurrentWeights, {0, 0}}, costs));
}

}  // namespace
}  // namespace pipesim
