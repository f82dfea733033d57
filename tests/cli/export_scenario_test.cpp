// `pipesim export SCENARIO`: a scenario's schedule entry planned with the scenario's own per-stage costs (a
// transformer on a hardware profile, the entry's own global batch) and written as PyTorch CSV. Replaying the
// file on the same scenario must give the run the entry itself gives, op for op: a file planned with other
// costs (zb-1p/2p choose their lists by the costs) or another pipeline would not.
#include <gtest/gtest.h>

#include "api/schedule_export.h"
#include "api/simulation.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

constexpr const char* kTransformerScenario =
    "name: export-test\n"
    "model: {layers: 8, hidden: 256, heads: 8, seq_len: 128, vocab: 1000, dtype: fp32}\n"
    "hardware: {profile: cpu-vm}\n"
    "pipeline: {stages: 4, microbatches: 8, global_batch: 16, batches: 2}\n"
    "optimizer: {sync: barrier, type: adamw}\n"
    "schedules:\n"
    "  - zb-1p\n"
    "  - {name: zb-2p, pipeline: {global_batch: 40}}\n"
    "  - paci\n";

void expect_replay_matches(const Scenario& scenario, int entry, const test::TempDir& dir) {
  const ScheduleRequest request = scenario.schedules.at(entry - 1);
  SCOPED_TRACE(request.name);
  const SimulationResult original = simulate_schedule(scenario, request, test::fixed_batches());
  const std::string path =
      dir.write("entry" + std::to_string(entry) + ".csv", export_scenario_entry_csv(scenario, entry));
  // The file carries the lists only: the replay gets the entry's pipeline and sync from the scenario.
  Scenario replay_scenario = scenario_for(scenario, request);
  replay_scenario.sync = original.spec.sync;
  const SimulationResult replayed =
      test::run_schedule(replay_scenario, "csv:" + path, {}, test::fixed_batches());
  ASSERT_EQ(replayed.trace.ops.size(), original.trace.ops.size());
  for (size_t i = 0; i < original.trace.ops.size(); ++i) {
    const OpRecord& a = original.trace.ops[i];
    const OpRecord& b = replayed.trace.ops[i];
    ASSERT_TRUE(a.action == b.action && a.device == b.device && a.start_ns == b.start_ns &&
                a.end_ns == b.end_ns)
        << "op " << i << ": " << describe(a.action) << " vs " << describe(b.action);
  }
}

TEST(ExportScenario, EntriesPlannedWithTheScenariosCostsReplayIdentically) {
  test::TempDir dir;
  const Scenario scenario = test::scenario_from_yaml(kTransformerScenario);
  expect_replay_matches(scenario, 1, dir);
  expect_replay_matches(scenario, 2, dir);  // its own global batch: b = 5 instead of 2
  // The costs matter: the same entry planned with uniform costs is another file.
  EXPECT_NE(export_scenario_entry_csv(scenario, 1),
            export_schedule_csv(test::scenario_from_yaml("pipeline: {stages: 4, microbatches: 8}\n"
                                                         "costs: {forward_ms: 1, backward_input_ms: 1, "
                                                         "backward_weight_ms: 1, activation_bytes: 1000, "
                                                         "weight_grad_activation_bytes: 500}\n"),
                                scenario.schedules[0]));
}

TEST(ExportScenario, RunTimeRulesAndMissingEntriesAreRefused) {
  const Scenario scenario = test::scenario_from_yaml(kTransformerScenario);
  EXPECT_NE(test::input_error_of([&] {
              export_scenario_entry_csv(scenario, 3);
            }).find("decides at run time; only static schedules can be exported"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([&] {
              export_scenario_entry_csv(scenario, 4);
            }).find("--entry 4: the scenario test.yaml has schedule entries 1 to 3"),
            std::string::npos);
}

TEST(ExportScenario, CommandLineWritesTheLibrarysFile) {
  test::TempDir dir;
  const std::string scenario_path = dir.write("s.yaml", kTransformerScenario);
  const test::CommandResult result =
      test::run_pipesim(fmt::format("export '{}' --entry 2", scenario_path), dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, export_scenario_entry_csv(load_scenario(scenario_path), 2));
}

// --scenario plans the named schedule with the scenario's own pipeline and costs (its entries aside).
TEST(ExportScenario, ScheduleWithAScenariosCosts) {
  test::TempDir dir;
  const std::string scenario_path = dir.write("s.yaml", kTransformerScenario);
  const test::CommandResult result = test::run_pipesim(
      fmt::format("export zb-2p --scenario '{}' --set pipeline.microbatches=4", scenario_path), dir);
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_EQ(result.out, export_schedule_csv(load_scenario(scenario_path, {"pipeline.microbatches=4"}),
                                            {"zb-2p", ScheduleParams("test")}));
  EXPECT_NE(result.out.find("3W3"), std::string::npos);
  const test::CommandResult clash =
      test::run_pipesim(fmt::format("export zb-2p --scenario '{}' --stages 8", scenario_path), dir);
  EXPECT_NE(clash.exit_code, 0);
  EXPECT_NE(clash.err.find("--stages and --scenario"), std::string::npos) << clash.err;
}

}  // namespace
}  // namespace pipesim
