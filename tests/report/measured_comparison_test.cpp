// Predictions beside a published run's measurements: each figure read from the run in the measurement's
// unit, the error's sign, the run the measurement names, and the lines `pipesim run` prints.
#include "report/measured_comparison.h"

#include <gtest/gtest.h>

namespace pipesim {
namespace {

// A run of 2 s per step whose largest device peaks at 3 GiB; nothing else known (no tokens, no FLOPs).
SimulationResult measured_comparison_run(const std::string& schedule) {
  SimulationResult r;
  r.label = schedule;
  r.schedule_name = schedule;
  r.metrics.period_ns = 2'000'000'000;
  DeviceMemory small, large;
  small.peak_bytes = 1LL << 30;
  large.peak_bytes = 3LL << 30;
  r.memory.devices = {small, large};
  return r;
}

MeasuredRun measured_comparison_measurement() {
  MeasuredRun m;
  m.source = "lab";
  m.reference = "paper, table 2";
  m.values = {{MeasuredFigure::kStepTimeS, 2.5},
              {MeasuredFigure::kTokensPerSPerGpu, 1000},
              {MeasuredFigure::kPeakMemoryGib, 4}};
  return m;
}

TEST(MeasuredComparison, EachFigureInItsUnitWithTheSignOfTheError) {
  const SimulationResult run = measured_comparison_run("1f1b-flush");
  EXPECT_DOUBLE_EQ(*predicted_figure(run, MeasuredFigure::kStepTimeS), 2.0);
  EXPECT_DOUBLE_EQ(*predicted_figure(run, MeasuredFigure::kPeakMemoryGib), 3.0);
  // No sequence length, no model FLOPs: not guessed.
  EXPECT_FALSE(predicted_figure(run, MeasuredFigure::kTokensPerSPerGpu));
  EXPECT_FALSE(predicted_figure(run, MeasuredFigure::kMfuPercent));
  const std::vector<FigureComparison> c = compare_with_measured(measured_comparison_measurement(), run);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_DOUBLE_EQ(*c[0].relative_error(), -0.2);  // 2 s predicted, 2.5 s measured: 20 % faster
  EXPECT_FALSE(c[1].relative_error());
  EXPECT_DOUBLE_EQ(*c[2].relative_error(), -0.25);
}

TEST(MeasuredComparison, TheNamedScheduleOrTheFirstRun) {
  const std::vector<SimulationResult> runs = {measured_comparison_run("gpipe"),
                                              measured_comparison_run("1f1b-flush")};
  MeasuredRun m = measured_comparison_measurement();
  EXPECT_EQ(measured_result(m, runs)->schedule_name, "gpipe");
  m.schedule = "1f1b-flush";
  EXPECT_EQ(measured_result(m, runs)->schedule_name, "1f1b-flush");
  m.schedule = "zb-h1";
  EXPECT_EQ(measured_result(m, runs), nullptr);
  EXPECT_NE(measured_comparison_text(m, runs).find("did not run here"), std::string::npos);
}

TEST(MeasuredComparison, PrintsEveryFigureMeasuredPredictedAndTheError) {
  MeasuredRun m = measured_comparison_measurement();
  m.flops = "6N per token";
  const std::string text = measured_comparison_text(m, {measured_comparison_run("1f1b-flush")});
  EXPECT_NE(text.find("Measured (lab: paper, table 2):"), std::string::npos) << text;
  EXPECT_NE(text.find("time per step"), std::string::npos) << text;
  EXPECT_NE(text.find("-20.0 %"), std::string::npos) << text;
  EXPECT_NE(text.find("1,000"), std::string::npos) << text;  // measured, not predicted: "-" beside it
  EXPECT_NE(text.find("-25.0 %"), std::string::npos) << text;
  EXPECT_NE(text.find("predicted by: 1f1b-flush"), std::string::npos) << text;
  EXPECT_NE(text.find("FLOPs as the source counts them: 6N per token"), std::string::npos) << text;
}

TEST(MeasuredComparison, FiguresReadAsPeoplePrintThem) {
  EXPECT_EQ(measured_figure_text(13.75), "13.75");
  EXPECT_EQ(measured_figure_text(0.41234), "0.4123");
  EXPECT_EQ(measured_figure_text(999.9), "999.9");
  EXPECT_EQ(measured_figure_text(5762), "5,762");
  EXPECT_EQ(measured_figure_text(1234567.4), "1,234,567");
  EXPECT_EQ(measured_figure_text(100000), "100,000");
}

}  // namespace
}  // namespace pipesim
