// A scenario's `measured:` section: every figure read in its unit, and a measurement that cannot be
// compared or checked (no source, a FLOP figure without its counting, an unknown figure) refused with the
// file, line and key.
#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/error_text.h"
#include "tests/scenario_text.h"

namespace pipesim {
namespace {

const std::string kMeasuredJob =
    "pipeline: {stages: 2, microbatches: 4}\n"
    "costs: {forward_ms: 1, backward_ms: 2}\n"
    "schedules: [gpipe, 1f1b-flush]\n";

std::string measured_error_of(const std::string& measured_yaml) {
  return test::input_error_of([&] { test::scenario_from_yaml(kMeasuredJob + measured_yaml); });
}

TEST(MeasuredSection, ReadsEveryFigureWithItsSource) {
  const Scenario s = test::scenario_from_yaml(
      kMeasuredJob +
      "measured: {source: lab, reference: 'paper, table 2', flops: '6N per token', quote: '| 7B | 412 |',\n"
      "           schedule: 1f1b-flush, ranking: 7b-configs, step_time_s: 1.5, tokens_per_s_per_gpu: 2500,\n"
      "           model_tflops_per_gpu: 412, mfu_percent: 41.6, peak_memory_gib: 60.5}\n");
  ASSERT_TRUE(s.measured.has_value());
  const MeasuredRun& m = *s.measured;
  EXPECT_EQ(m.source, "lab");
  EXPECT_EQ(m.reference, "paper, table 2");
  EXPECT_EQ(m.flops, "6N per token");
  EXPECT_EQ(m.quote, "| 7B | 412 |");
  EXPECT_EQ(m.schedule, "1f1b-flush");
  EXPECT_EQ(m.ranking, "7b-configs");
  ASSERT_EQ(m.values.size(), 5u);
  EXPECT_EQ(m.value_of(MeasuredFigure::kStepTimeS), 1.5);
  EXPECT_EQ(m.value_of(MeasuredFigure::kTokensPerSPerGpu), 2500);
  EXPECT_EQ(m.value_of(MeasuredFigure::kModelTflopsPerGpu), 412);
  EXPECT_EQ(m.value_of(MeasuredFigure::kMfuPercent), 41.6);
  EXPECT_EQ(m.value_of(MeasuredFigure::kPeakMemoryGib), 60.5);
  // In the order reports show them, whatever the YAML's.
  EXPECT_EQ(m.values.front().figure, MeasuredFigure::kStepTimeS);
  EXPECT_EQ(m.values.back().figure, MeasuredFigure::kPeakMemoryGib);
}

TEST(MeasuredSection, AScenarioWithoutOneHasNone) {
  EXPECT_FALSE(test::scenario_from_yaml(kMeasuredJob).measured.has_value());
}

TEST(MeasuredSection, RefusesWhatCannotBeComparedOrChecked) {
  EXPECT_NE(measured_error_of("measured: {reference: r, step_time_s: 1}\n").find("measured.source"),
            std::string::npos);
  EXPECT_NE(measured_error_of("measured: {source: s, step_time_s: 1}\n").find("measured.reference"),
            std::string::npos);
  const std::string no_figure = measured_error_of("measured: {source: s, reference: r}\n");
  EXPECT_NE(no_figure.find("at least one measured figure"), std::string::npos) << no_figure;
  // A FLOP figure means nothing without how it was counted (recomputation or not).
  const std::string no_count = measured_error_of("measured: {source: s, reference: r, mfu_percent: 40}\n");
  EXPECT_NE(no_count.find("measured.flops"), std::string::npos) << no_count;
  EXPECT_NE(measured_error_of("measured: {source: s, reference: r, flops: f, mfu_percent: 140}\n")
                .find("a percentage up to 100"),
            std::string::npos);
  EXPECT_NE(measured_error_of("measured: {source: s, reference: r, step_time_s: 0}\n").find("greater than 0"),
            std::string::npos);
}

TEST(MeasuredSection, ATypoIsNamedWithWhatWasMeant) {
  const std::string typo =
      measured_error_of("measured: {source: s, reference: r, tokens_per_s_per_gpo: 3}\n");
  EXPECT_NE(typo.find("test.yaml:4"), std::string::npos) << typo;
  EXPECT_NE(typo.find("did you mean 'tokens_per_s_per_gpu'"), std::string::npos) << typo;
  // A whole job's tokens/s is not comparable (a run's figures are one pipeline replica's): per GPU is.
  const std::string job = measured_error_of("measured: {source: s, reference: r, tokens_per_s: 3}\n");
  EXPECT_NE(job.find("did you mean 'tokens_per_s_per_gpu'"), std::string::npos) << job;
  const std::string schedule =
      measured_error_of("measured: {source: s, reference: r, step_time_s: 1, schedule: 1f1b-flsh}\n");
  EXPECT_NE(schedule.find("measured.schedule"), std::string::npos) << schedule;
  EXPECT_NE(schedule.find("did you mean '1f1b-flush'"), std::string::npos) << schedule;
}

}  // namespace
}  // namespace pipesim
