// What a command line selects and what it overrides: a bare --schedules name is the registered schedule, not
// a scenario entry of that name; --entry picks entries; --set pipeline.K and a sweep's -m apply on top of an
// entry's own pipeline:; a schedule that cannot run is skipped with its reason instead of ending the table.
#include "api/schedule_selection.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "api/run_batch.h"
#include "pipesim_source_dir.h"
#include "schedules/registry.h"
#include "sweeps/sweep.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

// Two entries with their own pipeline: at one global batch, like the default scenario.
constexpr const char* kEntries =
    "pipeline: {stages: 4, microbatches: 8, global_batch: 64, batches: 2}\n"
    "costs: {forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1, comm_ms: 0.1}\n"
    "schedules:\n"
    "  - {name: 1f1b-flush, pipeline: {microbatches: 4}}\n"
    "  - {name: paci, accumulation: 2, pipeline: {microbatches: 16, global_batch: 128}}\n";

TEST(ScheduleSelection, ABareNameIsTheRegisteredScheduleNotTheEntry) {
  const Scenario s = test::scenario_from_yaml(kEntries);
  const std::vector<ScheduleRequest> picked = select_schedules(s, "paci");
  ASSERT_EQ(picked.size(), 1u);
  EXPECT_TRUE(picked[0].pipeline.empty());
  EXPECT_FALSE(picked[0].params.has("accumulation"));
  // With spaces around items.
  EXPECT_EQ(select_schedules(s, " gpipe , 1f1b-flush:").size(), 2u);
}

TEST(ScheduleSelection, EntryPicksTheScenariosEntriesWithTheirParameters) {
  const Scenario s = test::scenario_from_yaml(kEntries);
  const std::vector<ScheduleRequest> picked = select_entries(s, "2,1");
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[0].name, "paci");
  EXPECT_TRUE(picked[0].params.has("accumulation"));
  EXPECT_EQ(*picked[0].pipeline.microbatches, 16);
  EXPECT_EQ(picked[1].name, "1f1b-flush");
  EXPECT_NE(test::input_error_of([&] { select_entries(s, "3"); }).find("schedule entries 1 to 2"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([&] { select_runs(s, "gpipe", "1"); }).find("give one of them"),
            std::string::npos);
}

TEST(ScheduleSelection, UnknownNamesAreRefusedWithADidYouMean) {
  const Scenario s = test::scenario_from_yaml(kEntries);
  const std::string error = test::input_error_of([&] { select_schedules(s, "1f1b-flsh"); });
  EXPECT_NE(error.find("did you mean '1f1b-flush'"), std::string::npos) << error;
  EXPECT_NE(test::input_error_of([&] { select_schedules(s, "gpipe,,paci"); }).find("empty item"),
            std::string::npos);
}

TEST(ScheduleSelection, MistypedParametersAndProfilesGetADidYouMean) {
  const Scenario s = test::scenario_from_yaml(kEntries);
  const std::string param =
      test::input_error_of([&] { simulate_schedule(s, select_schedules(s, "paci:accumulaton=2")[0]); });
  EXPECT_NE(param.find("did you mean 'accumulation'?; it takes: accumulation, max_in_flight"),
            std::string::npos)
      << param;
  const std::string profile = test::input_error_of([&] {
    test::scenario_from_yaml(
        "pipeline: {stages: 2, microbatches: 4}\nmodel: {layers: 4, hidden: 64, heads: 4, seq_len: 32, "
        "vocab: 100}\n"
        "hardware: {profile: h100-sxm-80gb}\n");
  });
  EXPECT_NE(profile.find("did you mean 'h100-sxm5-80gb'?"), std::string::npos) << profile;
}

TEST(ScheduleSelection, SetPipelineKeysWinOverAnEntrysOwnPipeline) {
  const Scenario plain = test::scenario_from_yaml(kEntries);
  EXPECT_EQ(scenario_for(plain, plain.schedules[0]).microbatches, 4);
  EXPECT_EQ(scenario_for(plain, plain.schedules[1]).global_batch, 128);

  const Scenario set = test::scenario_from_yaml(kEntries, {"pipeline.microbatches=16"});
  const Scenario flush = scenario_for(set, set.schedules[0]);
  EXPECT_EQ(flush.microbatches, 16);
  EXPECT_EQ(flush.global_batch, 64);  // the entry keeps what --set left alone
  EXPECT_EQ(scenario_for(set, set.schedules[1]).global_batch, 128);
  EXPECT_EQ(scenario_for(set, set.schedules[1]).microbatches, 16);

  // A pinned batch drops the entry's own batch either way.
  const Scenario batch = test::scenario_from_yaml(kEntries, {"pipeline.global_batch=32"});
  EXPECT_EQ(scenario_for(batch, batch.schedules[1]).global_batch, 32);
  EXPECT_EQ(scenario_for(batch, batch.schedules[1]).microbatches, 16);
  // The run itself: throughput at the overridden shape.
  const SimulationResult r = simulate_schedule(set, set.schedules[0]);
  EXPECT_EQ(r.spec.microbatches, 16);
}

TEST(ScheduleSelection, SweepAxesApplyToEntriesWithTheirOwnPipeline) {
  // The repro: the default scenario's 1f1b-flush entries carry pipeline: {microbatches: 4, ...}.
  SweepConfig config;
  config.scenario_path = std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/default.yaml";
  config.microbatches = {4, 8, 16};
  config.schedules = "1f1b-flush";
  config.jobs = 1;
  const SweepTable table = run_sweep(config);
  ASSERT_EQ(table.rows.size(), 3u);
  const auto column = [&](const std::string& name) {
    return static_cast<size_t>(std::find(table.header.begin(), table.header.end(), name) -
                               table.header.begin());
  };
  std::set<std::string> ms, throughputs;
  for (const auto& row : table.rows) {
    ms.insert(row.at(column("microbatches")));
    throughputs.insert(row.at(column("throughput_samples_per_s")));
  }
  EXPECT_EQ(ms, (std::set<std::string>{"4", "8", "16"}));
  EXPECT_EQ(throughputs.size(), 3u);

  // Entries without -m keep their own m, and a failed row reports the m it tried.
  test::TempDir dir;
  SweepConfig entries;
  entries.scenario_path = dir.write("entries.yaml",
                                    "pipeline: {stages: 4, microbatches: 8, batches: 2}\n"
                                    "costs: {forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1}\n"
                                    "schedules:\n"
                                    "  - {name: 1f1b-flush, pipeline: {microbatches: 4}}\n"
                                    "  - {name: dualpipe, pipeline: {microbatches: 5}}\n");
  entries.jobs = 1;
  const SweepTable rows = run_sweep(entries);
  ASSERT_EQ(rows.rows.size(), 2u);
  EXPECT_EQ(rows.rows[0].at(column("microbatches")), "4");
  EXPECT_EQ(rows.rows[1].at(column("microbatches")), "5");
  EXPECT_FALSE(rows.rows[1].back().empty());  // dualpipe needs m even and >= 2N
}

TEST(RunBatch, EveryRunnableRowRunsAndTheRestAreSkippedWithAReason) {
  // No schedules: every registered one. At N = 8, m = 12 dualpipe-v (m >= 2N) and others cannot run.
  const Scenario s = test::scenario_from_yaml(
      "pipeline: {stages: 8, microbatches: 12, batches: 2}\n"
      "costs: {forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1, weight_grad_activation_bytes: "
      "0}\n");
  const RunBatch batch = run_schedules(s, select_schedules(s, ""), {});
  EXPECT_GE(batch.results.size(), 10u);
  bool dualpipe_v = false;
  for (const SkippedRun& skipped : batch.skipped) {
    EXPECT_FALSE(skipped.reason.empty());
    EXPECT_EQ(skipped.reason.find('\n'), std::string::npos);
    if (skipped.schedule.rfind("dualpipe-v", 0) == 0) {
      dualpipe_v = true;
      // The listing puts the name first: the reason does not repeat it.
      EXPECT_EQ(skipped.reason, "needs at least 2N = 16 microbatches (one per stage of the V), got 12");
    }
  }
  EXPECT_TRUE(dualpipe_v);
  EXPECT_EQ(batch.results.size() + batch.skipped.size(), registered_schedules().size());
  EXPECT_NE(skipped_runs_text(batch.skipped).find("cannot run here"), std::string::npos);

  // Only schedules that cannot run: nothing to show is its own error (exit code 3).
  EXPECT_THROW(
      {
        const RunBatch none = run_schedules(s, select_schedules(s, "dualpipe-v"), {});
        EXPECT_TRUE(none.results.empty());
        throw_nothing_ran(none.skipped);
      },
      NothingRanError);
  // A bad parameter is bad input, not a skip.
  EXPECT_THROW(run_schedules(s, select_schedules(s, "paci:accumulation=0"), {}), InputError);
}

int selection_exit_code(const std::string& args) {
  const int status = std::system(fmt::format("{} {} > /dev/null 2>&1", PIPESIM_BINARY, args).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(RunBatch, ExitCodesSaySomethingRanNothingRanOrTheCommandLineWasWrong) {
  test::TempDir dir;
  const std::string path = dir.write("every.yaml",
                                     "pipeline: {stages: 8, microbatches: 12, batches: 2}\n"
                                     "costs: {forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1, "
                                     "weight_grad_activation_bytes: 0}\n");
  EXPECT_EQ(selection_exit_code("run " + path), 0);
  EXPECT_EQ(selection_exit_code("run " + path + " --schedules dualpipe-v"), 3);
  EXPECT_EQ(selection_exit_code("run " + path + " --schedules no-such"), 1);
  EXPECT_EQ(selection_exit_code("run " + path + " --no-such-flag"), 2);
  EXPECT_EQ(selection_exit_code("runn " + path), 2);
}

}  // namespace
}  // namespace pipesim
