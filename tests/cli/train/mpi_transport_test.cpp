// The mpi transport (one rank per device under mpiexec) trains exactly what the threads transport trains:
// the same final weights, bit for bit, for a synchronous and a deterministic asynchronous schedule.
// Correctness only: oversubscribed ranks on this machine give no timing.
#ifdef PIPESIM_MPIEXEC
#include <gtest/gtest.h>

#include "cli/train/execution_summary.h"
#include "executor/training_setup.h"
#include "tests/test_util.h"
#include "train/execute.h"

namespace pipesim {
namespace {

// PipeDream's real-mode order depends on arrival times (its weights differ between two threads runs too),
// so the asynchronous case is 2BW, whose versions follow its own step counter.
const std::vector<std::string> kSchedules{"1f1b-flush", "pipedream-2bw"};

std::string scenario_yaml(int devices) {
  return fmt::format(
      "pipeline: {{stages: {}, microbatches: {}, batches: 2}}\n"
      "costs: {{forward_ms: 1.0, backward_input_ms: 1.0, backward_weight_ms: 0.7, activation_bytes: 1e6}}\n",
      devices, 2 * devices);
}

void expect_mpi_matches_threads(int ranks) {
  const test::TempDir dir;
  const std::string scenario_path = dir.write("scenario.yaml", scenario_yaml(ranks));
  const std::string json_path = dir.file("mpi.json");
  const std::string out = dir.file("out.txt");
  const std::string command = fmt::format(
      "'{}' -n {} '{}' execute '{}' --mode real --transport mpi --schedules {},{} --json '{}' >'{}' 2>&1",
      PIPESIM_MPIEXEC, ranks, PIPESIM_BINARY, scenario_path, kSchedules[0], kSchedules[1], json_path, out);
  ASSERT_EQ(std::system(command.c_str()), 0) << test::read_file(out);
  const nlohmann::json mpi = nlohmann::json::parse(test::read_file(json_path));
  ASSERT_EQ(mpi["runs"].size(), kSchedules.size());
  const Scenario scenario = test::scenario_from_yaml(scenario_yaml(ranks));
  for (std::size_t i = 0; i < kSchedules.size(); ++i) {
    ExecuteOptions options;
    options.mode = ExecuteMode::kReal;
    const ExecutedSchedule threads =
        execute_schedule(scenario, {kSchedules[i], ScheduleParams(test::kTestSource)}, options);
    std::vector<std::uint64_t> expected;
    for (const auto& params : threads.result.final_parameters)
      expected.push_back(executor::fingerprint(params));
    const nlohmann::json& run = mpi["runs"][i];
    EXPECT_EQ(run["final_weights_fingerprint_per_stage"].get<std::vector<std::uint64_t>>(), expected)
        << kSchedules[i] << " on " << ranks << " ranks";
    // Every rank's ops came back to rank 0: F and B per stage and microbatch, one U per stage and batch.
    EXPECT_EQ(run["ops"].get<int>(), ranks * (2 * 2 * ranks * 2 + 2)) << kSchedules[i];
  }
}

TEST(ExecutorMpiTransport, TwoRanksLeaveTheWeightsOfTheThreadsTransport) {
  expect_mpi_matches_threads(2);
}

TEST(ExecutorMpiTransport, FourRanksLeaveTheWeightsOfTheThreadsTransport) {
  expect_mpi_matches_threads(4);
}

}  // namespace
}  // namespace pipesim
#endif
