// Determinism (docs/design.md §3): the same scenario gives byte-identical JSON and CSV, in one process and
// across processes. The scenario has heterogeneous stages, comm latency and many same-instant ties.
#include <gtest/gtest.h>

#include <algorithm>

#include "report/report.h"
#include "report/result_record.h"
#include "report/table_columns.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::scenario_from_yaml;

const char* const kScenario =
    "name: determinism\n"
    "pipeline: {stages: 4, microbatches: 8, batches: 3}\n"
    "costs: {forward_ms: [1, 1, 1.5, 1], backward_input_ms: [1, 1, 1.5, 2], backward_weight_ms: 1,\n"
    "        comm_ms: [0.25, 0, 0.25, 0], optimizer_ms: [0.5, 0, 0, 1],\n"
    "        weight_grad_activation_bytes: 400000}\n";

struct Outputs {
  std::string json;
  std::string csv;
};

Outputs run_all(const Scenario& scenario) {
  std::vector<SimulationResult> results;
  for (const ScheduleRequest& request : requested_schedules(scenario)) {
    results.push_back(simulate_schedule(scenario, request));
  }
  return {
      results_json_text({scenario.name, scenario.source}, results, ReportOptions{/*memory_timeline=*/true}),
      results_to_csv(results)};
}

TEST(Determinism, SameScenarioTwiceInOneProcess) {
  const Scenario scenario = scenario_from_yaml(kScenario);
  const Outputs first = run_all(scenario);
  const Outputs second = run_all(scenario);
  EXPECT_EQ(first.json, second.json);
  EXPECT_EQ(first.csv, second.csv);
  // Every registered schedule ran (none is silently skipped) and produced figures.
  EXPECT_EQ(std::count(first.csv.begin(), first.csv.end(), '\n'),
            static_cast<long>(requested_schedules(scenario).size()) + 1);
}

TEST(Determinism, SameScenarioTwiceThroughTheBinary) {
  const test::TempDir dir;
  const std::string path = dir.write("scenario.yaml", kScenario);
  std::vector<std::string> json, csv, table;
  for (int run = 0; run < 2; ++run) {
    const std::string json_path = dir.file(fmt::format("out{}.json", run));
    const std::string csv_path = dir.file(fmt::format("out{}.csv", run));
    const test::CommandResult r =
        test::run_pipesim(fmt::format("run '{}' --json '{}' --csv '{}'", path, json_path, csv_path), dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    json.push_back(test::read_file(json_path));
    csv.push_back(test::read_file(csv_path));
    table.push_back(r.out);
  }
  EXPECT_FALSE(json[0].empty());
  EXPECT_EQ(json[0], json[1]);
  EXPECT_EQ(csv[0], csv[1]);
  EXPECT_EQ(table[0], table[1]);
  // The binary writes what the library computes.
  const Scenario scenario = test::scenario_from_yaml(kScenario);
  EXPECT_EQ(csv[0], run_all(scenario).csv);
}

}  // namespace
}  // namespace pipesim
