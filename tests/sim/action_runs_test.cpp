// Action lists held as runs (sim/action_runs.h): every list reads back exactly as pushed, and a repeated
// pattern is held once whatever its stride. The registered schedules' runs and plans are
// tests/schedules/action_runs_of_plans_test.cpp.
#include "sim/action_runs.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace pipesim {
namespace {

Action action_runs_random_action(std::mt19937& rng) {
  Action a;
  a.kind = static_cast<OpKind>(std::uniform_int_distribution<int>(0, 3)(rng));  // F, B, I or W
  a.stage = std::uniform_int_distribution<int>(0, 3)(rng);
  a.microbatch = std::uniform_int_distribution<int>(0, 50)(rng);
  a.fused_with_next = std::uniform_int_distribution<int>(0, 9)(rng) == 0;
  return a;
}

// Literal stretches and repeated patterns (periods up to twice the longest push_back() looks for, any
// stride, negative and zero included, any count of repetitions), one after another.
std::vector<Action> action_runs_random_list(std::mt19937& rng) {
  std::vector<Action> list;
  const int segments = std::uniform_int_distribution<int>(0, 8)(rng);
  for (int s = 0; s < segments; ++s) {
    if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
      const int length = std::uniform_int_distribution<int>(1, 30)(rng);
      for (int i = 0; i < length; ++i) list.push_back(action_runs_random_action(rng));
      continue;
    }
    std::vector<Action> pattern(std::uniform_int_distribution<int>(1, 2 * ActionRuns::kMaxPeriod)(rng));
    for (Action& a : pattern) a = action_runs_random_action(rng);
    const int stride = std::uniform_int_distribution<int>(-3, 3)(rng);
    const int repeats = std::uniform_int_distribution<int>(1, 40)(rng);
    for (int r = 0; r < repeats; ++r) {
      for (Action a : pattern) {
        a.microbatch += r * stride;
        list.push_back(a);
      }
    }
  }
  return list;
}

TEST(ActionRuns, ReadsBackEveryListExactlyAsPushed) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 2000; ++trial) {
    const std::vector<Action> list = action_runs_random_list(rng);
    const ActionRuns runs(list);
    ASSERT_EQ(runs.size(), list.size()) << trial;
    ASSERT_EQ(runs.expand(), list) << trial;
    // Never more actions stored than pushed.
    EXPECT_LE(runs.stored_actions(), list.size()) << trial;
  }
}

TEST(ActionRuns, HoldsARepeatedPatternAsOneRun) {
  ActionRuns runs;
  for (int k = 0; k < 1000; ++k) {
    runs.push_back(backward_input(2, k));
    runs.push_back(backward_weight(2, k - 1));
    runs.push_back(forward(2, k + 3));
  }
  EXPECT_EQ(runs.runs(), 1u);
  EXPECT_EQ(runs.stored_actions(), 3u);
  EXPECT_EQ(runs.size(), 3000u);
  // A stride of 0 and of 2 alike.
  ActionRuns same;
  for (int k = 0; k < 100; ++k) same.push_back(forward(0, 7));
  EXPECT_EQ(same.runs(), 1u);
  ActionRuns evens;
  for (int k = 0; k < 100; ++k) evens.push_back(forward(0, 2 * k));
  EXPECT_EQ(evens.stored_actions(), 1u);
}

}  // namespace
}  // namespace pipesim
