// The registered schedules' action lists held as runs (sim/action_runs.h): formula schedules hold a few runs
// per device whatever m, and every static plan's policies run what repeat_batches() lays out. The plans are
// made for costs stated directly (a scenario's explicit costs: F = I = 1 ms, W = 0.5 ms, 0.1 ms comm).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/errors.h"
#include "schedules/registry.h"
#include "schedules/repeating_list_policy.h"
#include "schedules/schedule.h"
#include "sim/action_runs.h"
#include "tests/schedules/schedule_runs.h"
#include "tests/sim/stage_table_costs.h"

namespace pipesim {
namespace {

// Static lists never look at the view.
struct ActionRunsNoView final : LocalView {
  bool is_ready(const Action& /*action*/) const override { return true; }
  int weight_version(int /*stage*/) const override { return 0; }
  int in_flight(int /*stage*/) const override { return 0; }
};

// A static schedule's spec and its costs: F = I = 1 ms, W = 0.5 ms, M_B 1 MB, M_W 0.4 MB per device (split
// over its chunks), 0.1 ms on every transfer; throws InputError for a shape the schedule refuses.
struct ActionRunsSetup {
  test::PreparedSchedule prepared;
  test::StageTableCosts costs;
};

ActionRunsSetup action_runs_setup(const std::string& name, int stages, int microbatches, int batches,
                                  OptimizerSync sync) {
  test::PreparedSchedule prepared = test::prepare_schedule(
      test::ScheduleRunSpec(name, stages, microbatches, batches).with_sync(sync).comm_ms(0.1));
  test::StageTableCosts costs = test::device_costs_on(
      prepared.layout, test::device_table_ms(stages, {1.0}, {1.0}, {0.5}, 1'000'000, 400'000));
  return {std::move(prepared), std::move(costs)};
}

// What the plan costs does not grow with m for the schedules given by a formula: the same runs and pattern
// actions per device at m = 64 and m = 4,096 (interleaved-1f1b, whose forward stage changes every round of
// N microbatches, holds about m / N runs instead).
TEST(ActionRuns, FormulaSchedulesHoldAFewRunsPerDeviceAtAnyM) {
  for (const std::string name : {"gpipe", "1f1b-flush", "zb-h1", "zb-h2", "zb-v"}) {
    std::vector<std::pair<size_t, size_t>> cost_at_small_m;
    for (const int microbatches : {64, 4096}) {
      const ActionRunsSetup run = action_runs_setup(name, 8, microbatches, 1, OptimizerSync::kBarrier);
      const auto& schedule = dynamic_cast<const StaticSchedule&>(*run.prepared.schedule);
      const std::vector<ActionRuns> runs = schedule.batch_runs(run.prepared.spec, run.costs);
      const DeviceActionLists lists = schedule.batch_actions(run.prepared.spec, run.costs);
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
      std::optional<ActionRunsSetup> run;
      try {
        run.emplace(action_runs_setup(info.name, stages, microbatches, batches,
                                      trial % 2 ? OptimizerSync::kPostValidation : OptimizerSync::kBarrier));
      } catch (const InputError&) {
        continue;  // a shape the schedule refuses
      }
      const auto* schedule = dynamic_cast<const StaticSchedule*>(run->prepared.schedule.get());
      if (schedule == nullptr) continue;
      const std::string what =
          fmt::format("{} N={} m={} batches={}", info.name, stages, microbatches, batches);
      const DeviceActionLists expected = schedule->all_actions(run->prepared.spec, run->costs);
      ExecutionPlan plan = schedule->plan(run->prepared.spec, run->costs);
      ASSERT_NE(plan.repeated, nullptr) << what;
      for (size_t d = 0; d < plan.policies.size(); ++d) {
        DevicePolicy& policy = *plan.policies[d];
        const ActionRunsNoView view;
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
