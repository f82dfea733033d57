// The terminal table (report/table_columns.h): compact by default, one unit per column, '-' for what a run
// cannot know, the best run that fits marked; of results filled below the api (tests/report/report_runs.h).
// A transformer's table is tests/api/result_table_test.cpp.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "base/errors.h"
#include "report/format.h"
#include "report/table_columns.h"
#include "tests/error_text.h"
#include "tests/report/report_runs.h"
#include "tests/scenario_text.h"

namespace pipesim {
namespace {

std::vector<std::string> result_table_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

TEST(ResultTable, OneBinaryUnitForEveryByteColumnAndDashForUnknown) {
  // 1F1B on N = 2 holds N microbatches on device 1: 2 x 1 MB = 2,000,000 B, the largest figure, shown in KiB
  // (1953.12) in every byte column; no parameter bytes, so the weights are unknown.
  const SimulationResult run =
      test::explicit_costs_result(test::uniform_explicit_scenario(2, 4, 1, 2), "1f1b-flush");
  const std::vector<std::string> lines = result_table_lines(render_result_table(
      "s", {run},
      TableOptions{
          false, {"schedule", "peak_memory_bytes", "peak_weight_bytes", "fits", "throughput_tokens_per_s"}}));
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[2], "schedule      peak (KiB)  peak weights (KiB)  fits  tokens/s");
  EXPECT_EQ(lines[4], "1f1b-flush *     1953.12                   -     -         -");
}

TEST(ResultTable, MarksTheFastestRunThatFits) {
  const Scenario scenario = test::uniform_explicit_scenario(4, 8, 1, 2);
  std::vector<SimulationResult> results = {test::explicit_costs_result(scenario, "gpipe"),
                                           test::explicit_costs_result(scenario, "1f1b-flush"),
                                           test::explicit_costs_result(scenario, "pipedream")};
  // The asynchronous pipedream has no flush, so it is the fastest; gpipe and 1f1b-flush share a period.
  ASSERT_GT(results[2].metrics.throughput_samples_per_s, results[1].metrics.throughput_samples_per_s);
  // No capacity known: the fastest of all.
  EXPECT_EQ(best_fitting_run(results), 2);
  // gpipe holds m = 8 microbatches, 1F1B N = 4, pipedream N = 4 plus its stashed weights: a capacity between
  // 1F1B's peak and pipedream's leaves 1F1B the fastest that fits (first of the ties with gpipe if it
  // fitted).
  const double capacity = static_cast<double>(results[1].memory.peak_bytes());
  ASSERT_LT(results[1].memory.peak_bytes(), results[0].memory.peak_bytes());
  for (SimulationResult& r : results) r.memory_capacity_bytes = capacity;
  if (results[2].memory.peak_bytes() <= results[1].memory.peak_bytes()) {
    results[2].memory_capacity_bytes = static_cast<double>(results[2].memory.peak_bytes()) - 1;
  }
  EXPECT_EQ(best_fitting_run(results), 1);
  const std::string table = render_result_table("s", results);
  EXPECT_NE(table.find("1f1b-flush *"), std::string::npos) << table;
  EXPECT_EQ(table.find("pipedream *"), std::string::npos) << table;
  EXPECT_NE(table.find("* the highest samples/s among the runs that fit"), std::string::npos) << table;
  // Nothing fits: nothing is marked.
  for (SimulationResult& r : results) r.memory_capacity_bytes = 1;
  EXPECT_EQ(best_fitting_run(results), -1);
  EXPECT_EQ(render_result_table("s", results).find(" *"), std::string::npos);
}

TEST(ResultTable, ColumnListsAreChecked) {
  EXPECT_EQ(parse_column_list("schedule,simulated_ops", "--columns"),
            (std::vector<std::string>{"schedule", "simulated_ops"}));
  // Ids take their figures' JSON names; the older short ids still work.
  EXPECT_EQ(parse_column_list("ops,peak_memory", "--columns"),
            (std::vector<std::string>{"simulated_ops", "peak_memory_bytes"}));
  const std::string error = test::input_error_of([] { parse_column_list("schedule,nope", "--columns"); });
  EXPECT_NE(error.find("unknown column 'nope'"), std::string::npos) << error;
  EXPECT_NE(error.find("throughput_samples_per_s"), std::string::npos) << error;  // lists the allowed ones
}

TEST(ResultTable, ABubbleBelowOneNeverReadsAsOneHundredPercent) {
  // 1 ns of work a microbatch against 1 ms comm hops: bubble 1 − 1e-7, not 100 %.
  const Scenario s = test::scenario_from_yaml(
      "pipeline: {stages: 4, microbatches: 8}\ncosts: {forward_ms: 0.000001, backward_ms: 0, comm_ms: 1}\n");
  const SimulationResult run = test::explicit_costs_result(s, "1f1b-flush");
  ASSERT_LT(run.metrics.bubble_fraction, 1);
  const std::string table =
      render_result_table("s", {run}, TableOptions{false, {"schedule", "bubble_fraction"}});
  EXPECT_EQ(table.find("100.0"), std::string::npos) << table;
  EXPECT_NE(table.find("99.9999"), std::string::npos) << table;
}

TEST(ResultTable, SlowRatesKeepTheirDigits) {
  EXPECT_EQ(format_rate(0.00534, 2), "0.00534");
  EXPECT_EQ(format_rate(0.00636, 2), "0.00636");
  EXPECT_EQ(format_rate(123.456, 2), "123.46");
  EXPECT_EQ(format_rate(0, 2), "0.00");
}

}  // namespace
}  // namespace pipesim
