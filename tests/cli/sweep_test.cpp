// pipesim sweep: list syntax, the product in a fixed order, and rows equal to the same runs made one at a
// time, whatever the number of threads.
#include "sweeps/sweep.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "report/report.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using Strings = std::vector<std::string>;

constexpr const char* kSweepScenario =
    "pipeline: {stages: 4, microbatches: 8, batches: 3}\n"
    "costs: {forward_ms: 1, backward_input_ms: 1.25, backward_weight_ms: 0.75, comm_ms: 0.125}\n";

TEST(SweepLists, ListsAndRanges) {
  EXPECT_EQ(expand_value_list("4,8,16", "--stages"), (Strings{"4", "8", "16"}));
  EXPECT_EQ(expand_value_list("4:64:x2", "--m"), (Strings{"4", "8", "16", "32", "64"}));
  EXPECT_EQ(expand_value_list("3:20:x2", "--m"), (Strings{"3", "6", "12"}));
  EXPECT_EQ(expand_value_list("0.5:2:+0.25", "--param"),
            (Strings{"0.5", "0.75", "1", "1.25", "1.5", "1.75", "2"}));
  EXPECT_EQ(expand_value_list("0:0.3:+0.1", "--param"), (Strings{"0", "0.1", "0.2", "0.3"}));
  EXPECT_EQ(expand_value_list("1,8:32:x2,100", "--m"), (Strings{"1", "8", "16", "32", "100"}));
  EXPECT_EQ(expand_value_list("true,false", "--param"), (Strings{"true", "false"}));
  EXPECT_EQ(expand_int_list("2:10:+4", "--stages", 1), (std::vector<int>{2, 6, 10}));
}

TEST(SweepLists, BadListsNameTheOption) {
  for (const char* bad : {"", "4,,8", "64:4:x2", "4:64:x1", "0:64:x2", "4:64:+0", "4:64:*2", "4:64", "a:8:x2",
                          "1:100000000:+1"}) {
    try {
      expand_value_list(bad, "--microbatches");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--microbatches", 0), 0u) << e.what();
    }
  }
  EXPECT_THROW(expand_int_list("0.5:2:+0.5", "--stages", 1), InputError);
  EXPECT_THROW(expand_int_list("0,1", "--stages", 1), InputError);
}

class SweepRuns : public ::testing::Test {
 protected:
  SweepConfig config() const {
    SweepConfig c;
    c.scenario_path = path_;
    c.stages = {2, 4};
    c.microbatches = {4, 14};
    c.schedules = "gpipe,interleaved-1f1b,zb-h1";
    return c;
  }
  test::TempDir dir_;
  std::string path_ = dir_.write("sweep.yaml", kSweepScenario);
};

TEST_F(SweepRuns, RowsEqualSingleRunsInProductOrder) {
  SweepConfig c = config();
  c.jobs = 3;
  const SweepTable table = run_sweep(c);
  const Strings metrics_header = csv_header();
  ASSERT_EQ(table.header.size(), metrics_header.size() + 2);
  EXPECT_EQ(table.header.front(), "schedule_name");
  EXPECT_EQ(table.header.back(), "error");
  ASSERT_EQ(table.rows.size(), 12u);

  size_t i = 0;
  for (const char* schedule : {"gpipe", "interleaved-1f1b", "zb-h1"}) {
    for (int n : {2, 4}) {
      for (int m : {4, 14}) {
        SCOPED_TRACE(fmt::format("{} N={} m={}", schedule, n, m));
        const Strings& row = table.rows[i++];
        ASSERT_EQ(row.size(), table.header.size());
        EXPECT_EQ(row[0], schedule);
        const Strings metrics(row.begin() + 1, row.end() - 1);
        const Scenario scenario = load_scenario(
            path_, {fmt::format("pipeline.stages={}", n), fmt::format("pipeline.microbatches={}", m)});
        if (std::string(schedule) == "interleaved-1f1b" && m % (m / n) != 0) {
          // m = 14 is not 3 equal rounds (14 div 4) at N = 4: the row stays, with the error and no metrics.
          EXPECT_NE(row.back().find("must be divisible by m div N"), std::string::npos) << row.back();
          EXPECT_THROW(test::run_schedule(scenario, schedule), InputError);
          EXPECT_EQ(metrics[2], "4");  // stages
          EXPECT_EQ(metrics[6], "");   // period_ms
          continue;
        }
        EXPECT_EQ(row.back(), "");
        EXPECT_EQ(metrics, csv_row(test::run_schedule(scenario, schedule)));
      }
    }
  }
  EXPECT_EQ(table.skipped, 1);  // the schedule's rule, not a failure
  EXPECT_EQ(table.failed, 0);
}

TEST_F(SweepRuns, SameTableWithOneThreadOrMany) {
  SweepConfig c = config();
  c.jobs = 1;
  const std::string one = sweep_to_csv(run_sweep(c));
  c.jobs = 5;
  EXPECT_EQ(sweep_to_csv(run_sweep(c)), one);
}

TEST_F(SweepRuns, RowsStreamInOrderWithManyThreadsAndSmallRunsOvertakingLargeOnes) {
  // Large runs first (N = 16, m = 64), then many small ones: threads finish small ones ahead of the large
  // one, and the sink still sees the product's order, each row as the table has it.
  SweepConfig c = config();
  c.stages = {16, 2, 3, 4};
  c.microbatches = {64, 4, 5, 6, 7, 8};
  c.schedules = "1f1b-flush,zb-h1";
  c.jobs = 1;
  const SweepTable reference = run_sweep(c);
  c.jobs = 4;
  std::vector<Strings> streamed;
  Strings header;
  SweepSink sink;
  sink.header = [&](const Strings& h) { header = h; };
  sink.row = [&](const Strings& row) { streamed.push_back(row); };
  const SweepSummary summary = run_sweep(c, sink);
  EXPECT_EQ(header, reference.header);
  EXPECT_EQ(streamed, reference.rows);
  EXPECT_EQ(summary.rows, reference.rows.size());
  EXPECT_EQ(summary.failed, reference.failed);
}

TEST_F(SweepRuns, ShardsInOrderAreTheWholeSweep) {
  SweepConfig c = config();
  c.stages = {2, 3, 4, 8};
  c.microbatches = {4, 8, 16, 32};
  c.jobs = 2;
  const SweepTable whole = run_sweep(c);
  for (int n : {1, 2, 3, 7}) {
    std::vector<Strings> concatenated;
    size_t largest_shard = 0;
    for (int i = 1; i <= n; ++i) {
      c.shard_index = i;
      c.shard_count = n;
      const SweepTable shard = run_sweep(c);
      EXPECT_EQ(shard.header, whole.header);
      concatenated.insert(concatenated.end(), shard.rows.begin(), shard.rows.end());
      largest_shard = std::max(largest_shard, shard.rows.size());
    }
    EXPECT_EQ(concatenated, whole.rows) << n << " shards";
    // Work, not counts, is balanced: the small runs' shards hold more of them, and none holds everything.
    if (n > 1) {
      EXPECT_LT(largest_shard, whole.rows.size()) << n << " shards";
    }
  }
  EXPECT_EQ(parse_shard("2/8"), std::make_pair(2, 8));
  for (const char* bad : {"", "0/4", "5/4", "1/0", "a/2", "1/2/3", "2", "-1/4"}) {
    EXPECT_THROW(parse_shard(bad), InputError) << bad;
  }
  c.shard_index = 3;
  c.shard_count = 2;
  EXPECT_THROW(run_sweep(c), InputError);
}

TEST_F(SweepRuns, ParameterListsBecomeColumns) {
  SweepConfig c = config();
  c.stages = {2};
  c.microbatches = {4};
  c.schedules = "interleaved-1f1b";
  c.params = {{"chunks", {"1", "2", "4"}}};
  const SweepTable table = run_sweep(c);
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(table.header[1], "chunks");
  const Scenario scenario = load_scenario(path_, {"pipeline.stages=2", "pipeline.microbatches=4"});
  for (size_t i = 0; i < 3; ++i) {
    const std::string chunks = c.params[0].second[i];
    EXPECT_EQ(table.rows[i][1], chunks);
    EXPECT_EQ(table.rows[i][2], fmt::format("interleaved-1f1b(chunks={})", chunks));
    const Strings metrics(table.rows[i].begin() + 2, table.rows[i].end() - 1);
    EXPECT_EQ(metrics, csv_row(test::run_schedule(scenario, "interleaved-1f1b", {{"chunks", chunks}})));
  }
}

TEST_F(SweepRuns, ParameterAppliesOnlyToSchedulesThatTakeIt) {
  SweepConfig c = config();
  c.stages = {2};
  c.microbatches = {4};
  c.schedules = "gpipe,interleaved-1f1b";
  c.params = {{"chunks", {"1", "2"}}};
  // gpipe takes no chunks: one row, its chunks cell empty; interleaved-1f1b one row per value.
  const SweepTable table = run_sweep(c);
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ((Strings{table.rows[0][0], table.rows[0][1]}), (Strings{"gpipe", ""}));
  EXPECT_EQ((Strings{table.rows[1][0], table.rows[1][1]}), (Strings{"interleaved-1f1b", "1"}));
  EXPECT_EQ((Strings{table.rows[2][0], table.rows[2][1]}), (Strings{"interleaved-1f1b", "2"}));
  EXPECT_EQ(table.failed, 0);

  // schedule:key limits the parameter to that schedule, even where another schedule takes it too.
  c.schedules = "zb-1p,zb-2p";
  c.params = {{"zb-2p:memory_limit", {"1.5", "2"}}};
  const SweepTable scoped = run_sweep(c);
  ASSERT_EQ(scoped.rows.size(), 3u);
  EXPECT_EQ(scoped.header[1], "zb-2p:memory_limit");
  EXPECT_EQ((Strings{scoped.rows[0][0], scoped.rows[0][1]}), (Strings{"zb-1p", ""}));
  EXPECT_EQ((Strings{scoped.rows[2][0], scoped.rows[2][1]}), (Strings{"zb-2p", "2"}));

  // No swept schedule takes it: an error naming the parameter and what the schedules do take.
  c.schedules = "gpipe,zb-h1";
  c.params = {{"memory_limit", {"1"}}};
  try {
    run_sweep(c);
    ADD_FAILURE() << "accepted a parameter no schedule takes";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--param memory_limit: no swept schedule takes 'memory_limit'"),
              std::string::npos)
        << e.what();
  }
  c.schedules = "zb-1p";
  c.params = {{"zb-2p:memory_limit", {"1"}}};
  EXPECT_THROW(run_sweep(c), InputError);
}

TEST_F(SweepRuns, CommandLineWritesTheSameCsv) {
  const std::string out = dir_.file("out.csv");
  const test::CommandResult r = test::run_pipesim(
      fmt::format(
          "sweep '{}' --stages 2,4 --microbatches 4:14:+10 --schedules gpipe,interleaved-1f1b,zb-h1 -j 2 "
          "--out '{}'",
          path_, out),
      dir_);
  // One run (interleaved with N=4, m=14) cannot run: its row says why and, as `run` does with a schedule
  // that cannot run, the sweep succeeds.
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, fmt::format("12 runs written to {}; 1 skipped: the schedule cannot run at that point (see "
                               "the error column)\n",
                               out));
  EXPECT_EQ(test::read_file(out), sweep_to_csv(run_sweep(config())));
}

TEST_F(SweepRuns, CommandLineShardsConcatenateToTheWholeCsv) {
  const std::string sweep =
      fmt::format("sweep '{}' --stages 2,4 --microbatches 4,8 --schedules gpipe,zb-h1 -j 2", path_);
  const std::string whole = dir_.file("whole.csv");
  ASSERT_EQ(test::run_pipesim(fmt::format("{} --out '{}'", sweep, whole), dir_).exit_code, 0);
  std::string concatenated;
  for (int i = 1; i <= 3; ++i) {
    const std::string part = dir_.file(fmt::format("part{}.csv", i));
    const test::CommandResult r =
        test::run_pipesim(fmt::format("{} --shard {}/3 --out '{}'", sweep, i, part), dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string text = test::read_file(part);
    concatenated += i == 1 ? text : text.substr(text.find('\n') + 1);  // every shard has the header
  }
  EXPECT_EQ(concatenated, test::read_file(whole));
  const test::CommandResult bad =
      test::run_pipesim(fmt::format("{} --shard 4/3 --out '{}'", sweep, dir_.file("bad.csv")), dir_);
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_NE(bad.err.find("--shard '4/3': expected i/n with 1 <= i <= n"), std::string::npos) << bad.err;
}

#ifdef PIPESIM_MPIEXEC
// Under mpiexec with 2 and 4 ranks, --mpi writes the bytes one thread writes. Correctness only:
// oversubscribed ranks on this machine give no timing.
TEST_F(SweepRuns, MpiRanksWriteTheBytesOfOneThread) {
  const std::string sweep = fmt::format(
      "sweep '{}' -N 2,4 -m 4,8,16 --schedules 1f1b-flush,zb-h1,pipedream,paci:accumulation=2", path_);
  const std::string one = dir_.file("one.csv");
  ASSERT_EQ(test::run_pipesim(fmt::format("{} -j 1 --out '{}'", sweep, one), dir_).exit_code, 0);
  for (const int ranks : {2, 4}) {
    const std::string csv = dir_.file(fmt::format("mpi-{}.csv", ranks));
    const test::CommandResult r =
        test::run_pipesim_mpi(ranks, fmt::format("{} --mpi --out '{}'", sweep, csv), dir_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(test::read_file(csv), test::read_file(one)) << ranks << " ranks";
  }
}
#endif

}  // namespace
}  // namespace pipesim
