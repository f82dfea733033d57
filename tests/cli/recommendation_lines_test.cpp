// Every line `pipesim run` prints (the table, the recommendation under it: report/recommendation.h) fits a
// terminal of 120 columns.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "tests/test_util.h"

namespace pipesim {
namespace {

// Columns of a line on a terminal (UTF-8 continuation bytes take none).
size_t recommendation_line_columns(const std::string& line) {
  return static_cast<size_t>(std::count_if(
      line.begin(), line.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// Every line `pipesim run` prints for the default scenario and the quickstart fits 120 columns (the lines
// under the table reached 212).
TEST(Recommendation, EveryLineOfTheDefaultRunFits120Columns) {
  const test::TempDir dir;
  for (const char* scenario : {"", "scenarios/quickstart/llama2-7b-h100.yaml"}) {
    const test::CommandResult r = test::run_pipesim(fmt::format("run {}", scenario), dir);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::stringstream in(r.out);
    for (std::string line; std::getline(in, line);)
      EXPECT_LE(recommendation_line_columns(line), 120U) << scenario << ": " << line;
  }
}

}  // namespace
}  // namespace pipesim
