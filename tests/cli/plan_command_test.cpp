// `pipesim plan` from the command line: a small job planned end to end (its table, its CSV of every
// candidate), and bad options named with what was expected.
#include <gtest/gtest.h>

#include <regex>

#include "tests/test_util.h"

namespace pipesim {
namespace {

const char* const kJob =
    "name: small-job\n"
    "model: {layers: 8, hidden: 1024, heads: 16, kv_heads: 4, seq_len: 1024, vocab: 32000, mlp: swiglu}\n"
    "hardware: {profile: h100-sxm5-80gb}\n"
    "parallel: {gpus_per_node: 4}\n"
    "pipeline: {stages: 2, microbatches: 8}\n";

TEST(PlanCommand, PrintsTheBestConfigurationsAndWritesEveryCandidate) {
  const test::TempDir dir;
  const std::string scenario = dir.write("job.yaml", kJob);
  const test::CommandResult r = test::run_pipesim(
      fmt::format(
          "plan '{}' --gpus 8 --global-batch 16 --top 2 --schedules 1f1b-flush,zb-v,pipedream-2bw --csv '{}'",
          scenario, dir.file("plan.csv")),
      dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("on 8 GPUs (4 per node), global batch 16 samples of 1024 tokens"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Best synchronous configurations"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Best asynchronous configurations"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("The runner-up"), std::string::npos) << r.out;
  const std::string csv = test::read_file(dir.file("plan.csv"));
  EXPECT_EQ(csv.rfind("schedule,tensor,context,pipeline,data,", 0), 0u) << csv;
  EXPECT_NE(csv.find(",simulated,"), std::string::npos) << csv;
  // Issue 47: each row's memory margin, the usable memory (79.65 GiB here) above its peak, in the table and
  // the CSV.
  EXPECT_NE(r.out.find("GiB/GPU  GiB left  idle %"), std::string::npos) << r.out;
  EXPECT_NE(csv.find(",peak_gib,margin_gib,idle_fraction\n"), std::string::npos) << csv;
  const std::smatch row = [&] {
    std::smatch m;
    std::regex_search(csv, m, std::regex(",simulated,,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,[^,]*,([^,]*),([^,]*),"));
    return m;
  }();
  ASSERT_EQ(row.size(), 3u) << csv;
  EXPECT_NEAR(std::stod(row[1]) + std::stod(row[2]), 79.65, 0.02) << row[0];  // to the CSV's 4 digits
}

// A traced run of the scenario's own configuration scales every configuration's op times, and says so.
TEST(PlanCommand, TraceCostsScaleEveryConfiguration) {
  const test::TempDir dir;
  const std::string scenario = dir.write("job.yaml", kJob);
  std::string events;
  for (int stage = 0; stage < 2; ++stage) {
    for (int mb = 0; mb < 8; ++mb) {
      for (const char* kind : {"F", "B"}) {
        events +=
            fmt::format(R"({}{{"ph": "X", "name": "PP:{}{}{}", "pid": {}, "tid": 1, "ts": {}, "dur": 900}})",
                        events.empty() ? "" : ", ", stage, kind, mb, stage, 1000 * mb);
      }
    }
  }
  const std::string trace = dir.write("rank.json", fmt::format(R"({{"traceEvents": [{}]}})", events));
  const std::string command =
      fmt::format("plan '{}' --gpus 8 --global-batch 16 --top 1 --schedules 1f1b-flush --trace-costs '{}'",
                  scenario, trace);
  const test::CommandResult r = test::run_pipesim(command, dir);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex("op times scaled by a measured run: F x[0-9.]+, I x[0-9.]+, "
                                          "W x[0-9.]+ \\(.*rank.json: 2 stages")))
      << r.out;
  const test::CommandResult missing = test::run_pipesim(
      fmt::format("plan '{}' --gpus 8 --trace-costs '{}'", scenario, dir.file("no.json")), dir);
  EXPECT_EQ(missing.exit_code, 2);  // a usage error, naming the file
  EXPECT_NE(missing.err.find("no.json"), std::string::npos) << missing.err;
}

TEST(PlanCommand, BadOptionsSayWhatWasExpected) {
  const test::TempDir dir;
  const std::string scenario = dir.write("job.yaml", kJob);
  const test::CommandResult recompute =
      test::run_pipesim(fmt::format("plan '{}' --gpus 8 --recompute none,ful", scenario), dir);
  EXPECT_EQ(recompute.exit_code, 1);
  EXPECT_NE(recompute.err.find("unknown recomputation 'ful' (expected none, selective or full, "
                               "comma-separated); did you mean 'full'?"),
            std::string::npos)
      << recompute.err;
  const test::CommandResult zero =
      test::run_pipesim(fmt::format("plan '{}' --gpus 8 --zero 1,4", scenario), dir);
  EXPECT_EQ(zero.exit_code, 1);
  EXPECT_NE(zero.err.find("4 is not a ZeRO stage (0 to 3)"), std::string::npos) << zero.err;
  const std::string costs = dir.write("costs.yaml",
                                      "pipeline: {stages: 2, microbatches: 4}\n"
                                      "costs: {forward_ms: 1, backward_ms: 2}\n");
  const test::CommandResult explicit_costs = test::run_pipesim(fmt::format("plan '{}' --gpus 8", costs), dir);
  EXPECT_EQ(explicit_costs.exit_code, 1);
  EXPECT_NE(explicit_costs.err.find("needs a transformer scenario"), std::string::npos) << explicit_costs.err;
  const test::CommandResult unknown =
      test::run_pipesim(fmt::format("plan '{}' --gpus 8 --schedules zb-vv", scenario), dir);
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_NE(unknown.err.find("unknown schedule 'zb-vv'"), std::string::npos) << unknown.err;
}

// Issue 47: PACI's accumulation doubled past m = 2^30 and divided by 0 (SIGFPE); a huge global batch ran for
// minutes. The first plans (no candidate fits the run's own ceilings), the second is refused by its estimated
// work before the first simulation, naming the figure and the option that raises the ceiling.
TEST(PlanCommand, AHugeGlobalBatchIsPlannedOrRefusedByItsWork) {
  const test::TempDir dir;
  const std::string scenario = dir.write("job.yaml", kJob);
  const test::CommandResult paci = test::run_pipesim(
      fmt::format("plan '{}' --gpus 8 --schedules paci --global-batch 1073741824 -q", scenario), dir);
  EXPECT_EQ(paci.exit_code, 0) << paci.err;
  EXPECT_NE(paci.out.find("global batch 1073741824 samples"), std::string::npos) << paci.out;
  const test::CommandResult tight = test::run_pipesim(
      fmt::format("--max-total-ops 1000 plan '{}' --gpus 8 --global-batch 64 -q", scenario), dir);
  EXPECT_EQ(tight.exit_code, 1) << tight.out;
  EXPECT_EQ(tight.out, "");
  EXPECT_NE(tight.err.find("plan (at most: the candidates under their memory bound, before pruning): "),
            std::string::npos)
      << tight.err;
  EXPECT_NE(tight.err.find("above the ceiling of 1e+03 ops; lower --global-batch or narrow the search"),
            std::string::npos)
      << tight.err;
  EXPECT_NE(tight.err.find("raise the ceiling with --max-total-ops"), std::string::npos) << tight.err;
}

#ifdef PIPESIM_MPIEXEC
// Under mpiexec with 2 and 4 ranks, --mpi prints the plan one thread prints (but for its search time) and
// writes the same CSV.
TEST(PlanCommand, MpiRanksPlanWhatOneThreadPlans) {
  const test::TempDir dir;
  const std::string scenario = dir.write("job.yaml", kJob);
  const std::string plan = fmt::format(
      "plan '{}' --gpus 8 --global-batch 16 --top 3 --schedules 1f1b-flush,zb-v,pipedream-2bw", scenario);
  const test::CommandResult one =
      test::run_pipesim(fmt::format("{} -j 1 --csv '{}'", plan, dir.file("one.csv")), dir);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const std::regex time(R"(configurations in [0-9.]+ s:)");
  const std::string expected = std::regex_replace(one.out, time, "configurations in (time) s:");
  for (const int ranks : {2, 4}) {
    const std::string csv = dir.file(fmt::format("mpi-{}.csv", ranks));
    const test::CommandResult r =
        test::run_pipesim_mpi(ranks, fmt::format("{} --mpi --csv '{}'", plan, csv), dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(std::regex_replace(r.out, time, "configurations in (time) s:"), expected) << ranks << " ranks";
    EXPECT_EQ(test::read_file(csv), test::read_file(dir.file("one.csv"))) << ranks << " ranks";
  }
}
#endif

}  // namespace
}  // namespace pipesim
