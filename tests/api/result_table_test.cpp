// The terminal table (report/table_columns.h) of a transformer scenario's runs: its figures (tokens/s, the
// per-GPU rates, the model's choices) are the api's, so this stays with the api; the table's other tests run
// below it (tests/report/result_table_test.cpp).
#include <gtest/gtest.h>

#include <sstream>

#include "report/table_columns.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

// Display width of the widest line (UTF-8: one column per code point, as for every character used here).
size_t widest_line(const std::string& text) {
  size_t widest = 0;
  std::stringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    size_t width = 0;
    for (unsigned char c : line) width += (c & 0xC0) != 0x80;
    widest = std::max(widest, width);
  }
  return widest;
}

TEST(ResultTable, CompactTableFitsIn120Columns) {
  // The longest labels (interleaved-1f1b(chunks=2), paci with a per-stage limit list), a global batch that
  // makes b fractional, a transformer (tokens/s known), every sync token.
  const Scenario scenario = test::scenario_from_yaml(
      "model: {layers: 8, hidden: 512, heads: 8, seq_len: 512, vocab: 32000}\n"
      "hardware: {profile: a100-sxm4-80gb}\n"
      "pipeline: {stages: 4, microbatches: 24, global_batch: 128, batches: 2}\n"
      "schedules:\n"
      "  - {name: interleaved-1f1b, chunks: 2}\n"
      "  - {name: paci, accumulation: 16, max_in_flight: [4, 3, 2, 1]}\n"
      "  - zb-1p\n"
      "  - 1f1b-flush\n");
  std::vector<SimulationResult> results;
  for (const ScheduleRequest& request : scenario.schedules)
    results.push_back(simulate_schedule(scenario, request));
  const std::string table = render_result_table("a-long-scenario-name", results);
  EXPECT_LE(widest_line(table), 120u) << table;
  EXPECT_NE(table.find("paci(accumulation=16,max_i… "), std::string::npos) << table;  // cut at 27
  EXPECT_NE(render_result_table("s", results, TableOptions{true, {}})
                .find("paci(accumulation=16,max_in_flight=4,3,2,1)"),
            std::string::npos);
  EXPECT_NE(table.find("post-validation"), std::string::npos) << table;
  // --wide shows more: period and critical path among them.
  const std::string wide = render_result_table("s", results, TableOptions{true, {}});
  for (const char* header : {"period (ms)", "critical path (ms)", "ops", "peak weights ("}) {
    EXPECT_EQ(table.find(header), std::string::npos) << header;
    EXPECT_NE(wide.find(header), std::string::npos) << header;
  }
}

}  // namespace
}  // namespace pipesim
