// The answer under the table (report/recommendation.h), --sort, and did-you-mean suggestions, on results
// filled below the api (tests/report/report_runs.h). That every line `pipesim run` prints fits 120 columns is
// tests/cli/recommendation_lines_test.cpp.
#include "report/recommendation.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "base/did_you_mean.h"
#include "report/format.h"
#include "report/report.h"
#include "report/table_columns.h"
#include "tests/error_text.h"
#include "tests/report/report_runs.h"
#include "tests/scenario_text.h"

namespace pipesim {
namespace {

// N = 4, m = 8: 1F1B holds up to 4 microbatches of 1 GiB on device 1, GPipe 8; PACI (asynchronous) is the
// fastest. A 6 GiB device fits 1F1B and PACI, not GPipe.
Scenario recommendation_scenario(double gib) {
  return test::scenario_from_yaml(fmt::format(
      "pipeline: {{stages: 4, microbatches: 8, batches: 3}}\n"
      "costs: {{forward_ms: 1, backward_ms: 2, activation_bytes: 1073741824, memory_capacity_gb: {}}}\n",
      gib));
}

// The text with its wrapped lines joined again (wrap_lines breaks at spaces and indents by 2).
std::string recommendation_unwrapped(std::string text) {
  for (size_t at = text.find("\n  "); at != std::string::npos; at = text.find("\n  ", at)) {
    text.replace(at, 3, " ");
  }
  return text;
}

TEST(Recommendation, NamesTheFastestSynchronousRunAndTheMarginToAnAsynchronousOne) {
  const Scenario s = recommendation_scenario(6);
  const std::vector<SimulationResult> runs = {
      test::explicit_costs_result(s, "gpipe"), test::explicit_costs_result(s, "1f1b-flush"),
      test::explicit_costs_result(s, "paci", {{"accumulation", "8"}})};
  ASSERT_EQ(fits_memory(runs[0]), std::optional<bool>(false));
  const std::string text = recommendation_unwrapped(recommendation_text(runs));
  EXPECT_NE(text.find("fastest synchronous run that fits: 1f1b-flush (B=8, m=8)"), std::string::npos) << text;
  EXPECT_NE(text.find("fastest run that fits: paci"), std::string::npos) << text;
  EXPECT_NE(text.find("asynchronous: changes the training semantics"), std::string::npos) << text;
  const double margin =
      runs[2].metrics.throughput_samples_per_s / runs[1].metrics.throughput_samples_per_s - 1;
  EXPECT_NE(text.find(fmt::format("{:+.1f} % against the fastest synchronous run", 100 * margin)),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("differ in sync (barrier, none)"), std::string::npos) << text;
  EXPECT_EQ(text.find("global batch"), std::string::npos) << text;  // every run at B = 8
}

TEST(Recommendation, WhenNothingFitsItNamesTheLeanestRunAndWhatWouldHelp) {
  const Scenario s = recommendation_scenario(2);
  const std::vector<SimulationResult> runs = {test::explicit_costs_result(s, "gpipe"),
                                              test::explicit_costs_result(s, "1f1b-flush")};
  const std::string text = recommendation_unwrapped(recommendation_text(runs));
  EXPECT_NE(text.find("no run fits: the device may hold 2.00 GiB; the leanest, 1f1b-flush (B=8, m=8), needs "
                      "4.00 GiB on device 1. What would help: more stages"),
            std::string::npos)
      << text;
  // Recomputation is named only where the model can recompute more.
  EXPECT_EQ(text.find("recomputation"), std::string::npos) << text;
  EXPECT_NE(recommendation_unwrapped(recommendation_text(runs, {true, true}))
                .find("recomputation (model.recompute"),
            std::string::npos);
  EXPECT_EQ(recommendation_text(runs, {true, false}).find("recomputation"), std::string::npos);
}

TEST(Recommendation, SortOrdersRowsByAColumn) {
  const Scenario s = recommendation_scenario(100);
  const std::vector<SimulationResult> runs = {
      test::explicit_costs_result(s, "1f1b-flush"), test::explicit_costs_result(s, "gpipe"),
      test::explicit_costs_result(s, "paci", {{"accumulation", "8"}})};
  const std::vector<SimulationResult> by_memory = sorted_by_column(runs, "peak_memory_bytes");
  EXPECT_EQ(by_memory.front().schedule_name, "1f1b-flush");  // 1F1B and PACI at 4 GiB keep their order
  EXPECT_EQ(by_memory.back().schedule_name, "gpipe");
  const std::vector<SimulationResult> by_speed = sorted_by_column(runs, "throughput_samples_per_s");
  EXPECT_EQ(by_speed.front().schedule_name, "paci");  // highest first
  EXPECT_THROW(sorted_by_column(runs, "no_such"), InputError);
}

// Long lines break at spaces, continued with an indent of 2; short lines and words wider than the line are
// kept whole; τ and Δ count one column each.
TEST(Recommendation, LongLinesWrapAtWordsWithAnIndent) {
  EXPECT_EQ(wrap_lines("short\nalso short\n", 10), "short\nalso short\n");
  EXPECT_EQ(wrap_lines("aaaa bbbb cccc dddd\n", 10), "aaaa bbbb\n  cccc\n  dddd\n");
  EXPECT_EQ(wrap_lines("τττττ Δ", 7), "τττττ Δ");
  EXPECT_EQ(wrap_lines("a verylongwordindeed b", 8), "a\n  verylongwordindeed\n  b");
}

TEST(DidYouMean, SuggestsCloseNamesAndPrefixesOnly) {
  EXPECT_EQ(closest_name("1f1b-flsh", {"gpipe", "1f1b-flush", "zb-h1"}), "1f1b-flush");
  EXPECT_EQ(closest_name("peak", {"period", "peak_memory", "peak_weights"}), "peak_memory");
  EXPECT_EQ(closest_name("RUN", {"run", "sweep"}), "run");
  EXPECT_EQ(closest_name("completely-different", {"run", "sweep"}), "");
  EXPECT_EQ(did_you_mean("swep", {"run", "sweep"}), "; did you mean 'sweep'?");
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3);
}

}  // namespace
}  // namespace pipesim
