// `pipesim costs` shows the costs a run uses: the same global batch, entry pipeline, layout and layer split,
// so every op of the run lasts what the command prints for its stage. And every report says whether a run's
// peak memory fits the device.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "api/simulation.h"
#include "api/stage_costs.h"
#include "pipesim_source_dir.h"
#include "report/report.h"
#include "report/result_record.h"
#include "report/table_columns.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

Scenario default_scenario() {
  return load_scenario(std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/default.yaml");
}

// Every op of the run against the command's row for its stage (rows are unrounded, the engine rounds to ns).
// Where m does not divide B the first B mod m microbatches of each batch are the larger ones (`rows`), the
// others the smaller (`costs.smaller_rows`).
void expect_ops_match_rows(const SimulationResult& run, const ResolvedStageCosts& costs) {
  const std::vector<StageRow>& rows = costs.rows;
  ASSERT_EQ(static_cast<int>(rows.size()), run.trace.layout.stages);
  const UnevenSplit split = uneven_split(costs.scenario);
  for (const OpRecord& op : run.trace.ops) {
    const bool smaller = split.larger_count > 0 && op.action.kind != OpKind::U &&
                         op.action.microbatch % costs.scenario.microbatches >= split.larger_count;
    const StageRow& row = (smaller ? costs.smaller_rows : rows).at(op.action.stage);
    double expected_ms = 0;
    switch (op.action.kind) {
      case OpKind::F:
        expected_ms = row.forward_ms;
        break;
      case OpKind::B:
        expected_ms = row.backward_input_ms + row.backward_weight_ms;
        break;
      case OpKind::I:
        expected_ms = row.backward_input_ms;
        break;
      case OpKind::W:
        expected_ms = row.backward_weight_ms;
        break;
      case OpKind::U:
        expected_ms = row.optimizer_ms;
        break;
    }
    ASSERT_NEAR(ns_to_ms(op.duration_ns()), expected_ms, 1e-6) << run.label << " stage " << op.action.stage;
  }
}

TEST(CostsCommand, EveryEntryShowsTheCostsItsRunUses) {
  const Scenario scenario = default_scenario();
  const std::vector<ScheduleRequest> requests = requested_schedules(scenario);
  // 1F1B at B=128 m=4 and B=256 m=40, PACI, interleaved (2 chunks per device), ZB-H1 (split backward).
  for (const int entry : {1, 15, 8, 20, 21}) {
    const ScheduleRequest& request = requests.at(entry - 1);
    const ResolvedStageCosts costs = resolve_stage_costs(scenario, entry, {});
    const SimulationResult run = simulate_schedule(scenario, request, SimulationOptions{});
    EXPECT_DOUBLE_EQ(costs.scenario.samples_per_microbatch(), run.microbatch_size) << entry;
    expect_ops_match_rows(run, costs);
  }
}

TEST(CostsCommand, WithoutAnEntryItUsesTheScenariosGlobalBatch) {
  const Scenario scenario = default_scenario();
  const ResolvedStageCosts costs = resolve_stage_costs(scenario, 0, {});
  // pipeline: {microbatches: 8, global_batch: 128}: b = 16, as entry 2 (1F1B at B=128, m=8) runs.
  EXPECT_DOUBLE_EQ(costs.scenario.samples_per_microbatch(), 16);
  const ResolvedStageCosts entry = resolve_stage_costs(scenario, 2, {});
  ASSERT_EQ(costs.rows.size(), entry.rows.size());
  for (size_t i = 0; i < costs.rows.size(); ++i) {
    EXPECT_EQ(costs.rows[i].forward_ms, entry.rows[i].forward_ms);
    EXPECT_EQ(costs.rows[i].units, entry.rows[i].units);
  }
  EXPECT_NE(
      test::input_error_of([&] { resolve_stage_costs(scenario, 99, {}); }).find("schedule entries 1 to 27"),
      std::string::npos);
}

TEST(CostsCommand, ExplicitCostsResolveThroughTheSameCostModel) {
  const Scenario scenario = test::uniform_scenario(3, 6, 1.5, 2.5);
  const ResolvedStageCosts costs = resolve_stage_costs(scenario, 0, {});
  ASSERT_EQ(costs.rows.size(), 3u);
  expect_ops_match_rows(test::run_schedule(scenario, "1f1b-flush"), costs);
}

TEST(MemoryFit, EveryReportSaysWhetherThePeakFits) {
  SimulationResult run = simulate_schedule(default_scenario(), requested_schedules(default_scenario()).at(1));
  EXPECT_EQ(run.memory_capacity_bytes, 96.0 * 1024 * 1024 * 1024);  // the profile's 96 GiB
  const Bytes peak = run.memory.peak_bytes();
  const size_t fits_column = [] {
    const std::vector<std::string> header = csv_header();
    return static_cast<size_t>(std::find(header.begin(), header.end(), "fits") - header.begin());
  }();
  ASSERT_LT(fits_column, csv_header().size());
  struct Case {
    double capacity;
    std::optional<bool> fits;
    const char* csv;
    const char* table;
  };
  for (const Case& c :
       {Case{static_cast<double>(peak), true, "true", " yes "},
        Case{static_cast<double>(peak) - 1, false, "false", " no "}, Case{0, {}, "", " - "}}) {
    run.memory_capacity_bytes = c.capacity;
    EXPECT_EQ(fits_memory(run), c.fits);
    EXPECT_EQ(csv_row(run).at(fits_column), c.csv);
    const nlohmann::ordered_json json = result_record(run);
    EXPECT_EQ(json["fits"].is_null(), !c.fits.has_value());
    if (c.fits) {
      EXPECT_EQ(json["fits"].get<bool>(), *c.fits);
    }
    const std::string table = render_result_table("s", {run});
    const std::string row = table.substr(table.rfind(run.schedule_label));
    EXPECT_NE(row.find(c.table), std::string::npos) << row;
  }
  // Explicit costs state no capacity.
  EXPECT_FALSE(fits_memory(test::run_schedule(test::uniform_scenario(2, 4, 1, 2), "1f1b-flush")).has_value());
}

}  // namespace
}  // namespace pipesim
