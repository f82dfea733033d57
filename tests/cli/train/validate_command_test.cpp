// `pipesim validate` from the command line: the JSON carries the per-op comparison, the timing's trust and
// the profile's provenance check, and the text says which profile the cost model used and what it lacks.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "pipesim_source_dir.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

TEST(ValidateCommand, ReportsOpTimesTrustAndTheProfilesProvenance) {
  test::TempDir dir;
  const test::CommandResult r =
      test::run_pipesim(fmt::format("validate {}/share/scenarios/executor/validate-small.yaml --schedules "
                                    "1f1b-flush,pipedream --runs 2 "
                                    "--max-preempted 100 --rescale-to-probe --json {}",
                                    PIPESIM_SOURCE_DIR, dir.file("v.json")),
                        dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // The shipped cpu-vm profile predates the recorded vector extensions and the executor's kernels.
  EXPECT_NE(r.out.find("WARNING: another machine's profile"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the profile lacks element-wise kernels"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("timing: ops' threads preempted for"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("runs: each schedule 2 times"), std::string::npos) << r.out;
  // The machine's speed against the profile, before and after, and the cost model rescaled to the first.
  EXPECT_NE(r.out.find("machine before the runs: GEMMs run at"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("machine after the runs: GEMMs run at"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cost model rescaled to the machine's speed before the runs"), std::string::npos)
      << r.out;
  const nlohmann::json v = nlohmann::json::parse(test::read_file(dir.file("v.json")));
  EXPECT_GT(v["machine_speed"]["before_runs"]["ratio"].get<double>(), 0);
  EXPECT_EQ(v["machine_speed"]["before_runs"]["gemms"], 8);
  EXPECT_TRUE(v["machine_speed"]["rescaled_to_probe"].get<bool>());
  EXPECT_FALSE(v["profile_mismatches"].empty());
  EXPECT_TRUE(v["timing"]["trusted"].get<bool>());
  ASSERT_EQ(v["schedules"].size(), 2u);
  for (const auto& schedule : v["schedules"]) {
    EXPECT_EQ(schedule["runs"], 2);
    std::set<std::string> kinds;
    for (const auto& op : schedule["op_times"]) {
      kinds.insert(op["kind"].get<std::string>());
      EXPECT_GT(op["measured_mean_ms"].get<double>(), 0);
      EXPECT_GT(op["predicted_mean_ms"].get<double>(), 0);
    }
    EXPECT_EQ(kinds, (std::set<std::string>{"F", "B", "U"}));
  }
}

TEST(ValidateCommand, NoProbeLeavesTheMachinesSpeedOutAndCannotRescale) {
  test::TempDir dir;
  const std::string scenario = fmt::format(
      "{}/share/scenarios/executor/validate-small.yaml --schedules 1f1b-flush --runs 1 "
      "--max-preempted 100 --no-probe",
      PIPESIM_SOURCE_DIR);
  const test::CommandResult r =
      test::run_pipesim(fmt::format("validate {} --json {}", scenario, dir.file("v.json")), dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("machine before the runs"), std::string::npos) << r.out;
  const nlohmann::json v = nlohmann::json::parse(test::read_file(dir.file("v.json")));
  EXPECT_TRUE(v["machine_speed"]["before_runs"].is_null());
  const test::CommandResult refused =
      test::run_pipesim(fmt::format("validate {} --rescale-to-probe", scenario), dir);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("--rescale-to-probe needs"), std::string::npos) << refused.err;
}

TEST(ValidateCommand, MaxPreemptedIsAPercentage) {
  test::TempDir dir;
  const test::CommandResult r = test::run_pipesim(
      fmt::format("validate {}/share/scenarios/executor/validate-small.yaml --max-preempted 101",
                  PIPESIM_SOURCE_DIR),
      dir);
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

}  // namespace
}  // namespace pipesim
