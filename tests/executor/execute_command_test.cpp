// `pipesim execute`'s library half: a scenario's schedule trained in replay and real mode, summarised.
#include <gtest/gtest.h>

#include "api/execute.h"
#include "cli/execution_summary.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

ExecutedSchedule execute_small(const std::string& name, ExecuteMode mode) {
  // N = 2, m = 2, one batch, F = 1 ms, B = 2 ms, no comm.
  const Scenario scenario = test::uniform_scenario(2, 2, 1.0, 2.0, 0, 1);
  ExecuteOptions options;
  options.mode = mode;
  options.setup.shape = {.input_width = 8, .width = 8, .blocks = 2, .classes = 3};
  return execute_schedule(scenario, {name, ScheduleParams(test::kTestSource)}, options);
}

TEST(ExecuteCommand, ReplaySummaryHasGpipesClosedFormMakespanAndNoDrift) {
  const nlohmann::json summary = execution_summary(execute_small("gpipe", ExecuteMode::kReplay));
  // GPipe: (m + N - 1) F then (m + N - 1) B = 3 ms + 6 ms; U costs nothing here.
  EXPECT_EQ(summary["makespan_ns"].get<long long>(), 9'000'000);
  EXPECT_EQ(summary["ops"].get<int>(), 2 * 2 * 2 + 2);  // F and B per stage and microbatch, one U per stage
  EXPECT_EQ(summary["max_drift_per_stage"], nlohmann::json::array({0, 0}));
  EXPECT_EQ(summary["mode"], "replay");
}

TEST(ExecuteCommand, RealAndReplayTrainTheSameSynchronousModel) {
  const nlohmann::json replay = execution_summary(execute_small("1f1b-flush", ExecuteMode::kReplay));
  const nlohmann::json real = execution_summary(execute_small("1f1b-flush", ExecuteMode::kReal));
  const nlohmann::json gpipe = execution_summary(execute_small("gpipe", ExecuteMode::kReplay));
  EXPECT_EQ(real["mode"], "real");
  // One batch: every schedule reads version 0, so the losses are the same numbers.
  EXPECT_EQ(real["first_batch_mean_loss"], replay["first_batch_mean_loss"]);
  EXPECT_EQ(gpipe["first_batch_mean_loss"], replay["first_batch_mean_loss"]);
  EXPECT_GT(real["first_batch_mean_loss"].get<double>(), 0.0);
}

}  // namespace
}  // namespace pipesim
