// Action lists held as runs (sim/action_runs.h): every list reads back exactly as pushed, formula schedules
// hold a few runs per device whatever m, and a static plan's policies run what repeat_batches() lays out.
#include "sim/action_runs.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "api/resolve.h"
#include "schedules/registry.h"
#include "schedules/repeating_list_policy.h"
#include "schedules/schedule.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

Action random_action(std::mt19937& rng) {
  Action a;
  a.kind = static_cast<OpKind>(std::uniform_int_distribution<int>(0, 3)(rng));  // F, B, I or W
  a.stage = std::uniform_int_distribution<int>(0, 3)(rng);
  a.microbatch = std::uniform_int_distribution<int>(0, 50)(rng);
  a.fused_with_next = std::uniform_int_distribution<int>(0, 9)(rng) == 0;
  return a;
}

// Literal stretches and repeated patterns (periods up to twice the longest push_back() looks for, any
// stride, negative and zero included, any count of repetitions), one after another.
std::vector<Action> random_list(std::mt19937& rng) {
  std::vector<Action> list;
  const int segments = std::uniform_int_distribution<int>(0, 8)(rng);
  for (int s = 0; s < segments; ++s) {
    if (std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
      const int length = std::uniform_int_distribution<int>(1, 30)(rng);
      for (int i = 0; i < length; ++i) list.push_back(random_action(rng));
      continue;
    }
    std::vector<Action> pattern(std::uniform_int_distribution<int>(1, 2 * ActionRuns::kMaxPeriod)(rng));
    for (Action& a : pattern) a = random_action(rng);
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
    const std::vector<Action> list = random_list(rng);
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

// Static lists never look at the view.
struct NoView final : LocalView {
  bool is_ready(const Action& /*action*/) const override { return true; }
  int weight_version(int /*stage*/) const override { return 0; }
  int in_flight(int /*stage*/) const override { return 0; }
};

ResolvedRun resolve_static(const std::string& name, int stages, int microbatches, int batches,
                           const std::string& sync) {
  const std::string yaml = fmt::format(
      "pipeline: {{stages: {}, microbatches: {}, batches: {}}}\n"
      "optimizer: {{sync: {}}}\n"
      "costs: {{forward_ms: 1.0, backward_input_ms: 1.0, backward_weight_ms: 0.5, comm_ms: 0.1, "
      "activation_bytes: 1e6, weight_grad_activation_bytes: 4e5}}\n",
      stages, microbatches, batches, sync);
  return resolve(test::scenario_from_yaml(yaml), {name, ScheduleParams(test::kTestSource)});
}

// What the plan costs does not grow with m for the schedules given by a formula: the same runs and pattern
// actions per device at m = 64 and m = 4,096 (interleaved-1f1b, whose forward stage changes every round of
// N microbatches, holds about m / N runs instead).
TEST(ActionRuns, FormulaSchedulesHoldAFewRunsPerDeviceAtAnyM) {
  for (const std::string name : {"gpipe", "1f1b-flush", "zb-h1", "zb-h2", "zb-v"}) {
    std::vector<std::pair<size_t, size_t>> cost_at_small_m;
    for (const int microbatches : {64, 4096}) {
      const ResolvedRun run = resolve_static(name, 8, microbatches, 1, "barrier");
      const auto& schedule = dynamic_cast<const StaticSchedule&>(*run.schedule);
      const std::vector<ActionRuns> runs = schedule.batch_runs(run.spec, *run.costs);
      const DeviceActionLists lists = schedule.batch_actions(run.spec, *run.costs);
      ASSERT_EQ(runs.size(), lists.size());
      for (size_t d = 0; d < runs.size(); ++d) {
        const std::string what = fmt::format("{} m={} device {}", name, microbatches, d);
        EXPECT_EQ(runs[d].expand(), lists[d]) << what;
        EXPECT_LE(runs[d].runs(), 12u) << what;
        EXPECT_LE(runs[d].stored_actions(), 64u) << what;
        const std::pair<size_t, size_t> cost{runs[d].runs(), runs[d].stored_actions()};
        if (microbatches == 64) {
          cost_at_small_m.push_back(cost);
        } else {
          EXPECT_EQ(cost, cost_at_small_m.at(d)) << what;
        }
      }
    }
  }
}

// Every static schedule's plan: each device's policy asks for exactly what repeat_batches() lays out, and
// names the same next action (fused pairs).
TEST(ActionRuns, StaticPlansRunWhatTheirListsSay) {
  std::mt19937 rng(5);
  int compared = 0;
  for (const ScheduleInfo& info : registered_schedules()) {
    for (int trial = 0; trial < 4; ++trial) {
      const int stages = std::uniform_int_distribution<int>(2, 6)(rng);
      const int microbatches = std::uniform_int_distribution<int>(1, 4 * stages)(rng);
      const int batches = std::uniform_int_distribution<int>(1, 3)(rng);
      std::optional<ResolvedRun> run;
      try {
        run.emplace(resolve_static(info.name, stages, microbatches, batches,
                                   trial % 2 ? "post-validation" : "barrier"));
        run->schedule->check(run->spec);
      } catch (const InputError&) {
        continue;  // a shape the schedule refuses
      }
      const auto* schedule = dynamic_cast<const StaticSchedule*>(run->schedule.get());
      if (schedule == nullptr) continue;
      const std::string what =
          fmt::format("{} N={} m={} batches={}", info.name, stages, microbatches, batches);
      const DeviceActionLists expected = schedule->all_actions(run->spec, *run->costs);
      ExecutionPlan plan = schedule->plan(run->spec, *run->costs);
      ASSERT_NE(plan.repeated, nullptr) << what;
      for (size_t d = 0; d < plan.policies.size(); ++d) {
        DevicePolicy& policy = *plan.policies[d];
        const NoView view;
        for (size_t i = 0; i < expected[d].size(); ++i) {
          ASSERT_FALSE(policy.finished()) << what << " device " << d << " action " << i;
          const std::optional<Action> next = policy.next(view);
          ASSERT_TRUE(next.has_value()) << what;
          ASSERT_EQ(*next, expected[d][i]) << what << " device " << d << " action " << i;
          const std::optional<Action> after = policy.after_next();
          if (after.has_value()) {
            ASSERT_LT(i + 1, expected[d].size()) << what;
            EXPECT_EQ(*after, expected[d][i + 1]) << what << " device " << d << " action " << i;
          }
          policy.started(*next);
        }
        EXPECT_TRUE(policy.finished()) << what << " device " << d;
        EXPECT_FALSE(policy.next(view).has_value()) << what;
      }
      ++compared;
    }
  }
  EXPECT_GT(compared, 40);
}

}  // namespace
}  // namespace pipesim
