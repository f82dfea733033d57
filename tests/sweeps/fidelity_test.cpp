// pipesim fidelity: the measured scenarios of a directory, each run's measured schedule predicted, the
// errors per source and over all, and the documents. The runs are closed forms: 1F1B and GPipe with a flush
// on N = 2, m = 4, F = 1 ms, B = 2 ms take (m + N - 1)(F + B) = 15 ms a step.
#include "sweeps/fidelity.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "sweeps/fidelity_report.h"
#include "tests/error_text.h"
#include "tests/temp_dir.h"

namespace pipesim {
namespace {

std::string fidelity_scenario(const std::string& measured) {
  return "pipeline: {stages: 2, microbatches: 4}\n"
         "costs: {forward_ms: 1, backward_ms: 2}\n"
         "schedules: [gpipe, 1f1b-flush]\n" +
         measured;
}

TEST(Fidelity, EveryMeasuredScenarioOfADirectoryPredictedAndItsErrorsPerSource) {
  const test::TempDir dir;
  dir.write("a.yaml", fidelity_scenario("measured: {source: lab, reference: r1, step_time_s: 0.0125}\n"));
  dir.write("b.yaml", fidelity_scenario("measured: {source: other, reference: r2, step_time_s: 0.015,\n"
                                        "           schedule: 1f1b-flush, peak_memory_gib: 1}\n"));
  dir.write("c.yaml", fidelity_scenario(""));  // nothing measured: not a published run
  dir.write("notes.txt", "not a scenario");
  const std::vector<Scenario> scenarios = measured_scenarios({dir.path()});
  ASSERT_EQ(scenarios.size(), 2u);
  EXPECT_EQ(scenarios[0].source, dir.file("a.yaml"));
  const Fidelity f = run_fidelity(scenarios, Limits{});
  ASSERT_EQ(f.runs.size(), 2u);
  EXPECT_EQ(f.runs[0].failure, "");
  EXPECT_EQ(f.runs[0].predicted_by, "gpipe");  // the first entry
  EXPECT_EQ(f.runs[1].predicted_by, "1f1b-flush");
  ASSERT_TRUE(f.runs[0].speed());
  EXPECT_NEAR(*f.runs[0].speed()->predicted, 0.015, 1e-12);
  EXPECT_NEAR(*f.runs[0].speed()->relative_error(), 0.2, 1e-9);
  ASSERT_EQ(f.sources.size(), 3u);
  EXPECT_EQ(f.sources[0].source, "lab");
  EXPECT_EQ(f.sources[1].source, "other");
  EXPECT_EQ(f.sources[2].source, "all");
  EXPECT_NEAR(f.sources[0].speed_mape, 0.2, 1e-9);
  // A step 20 % longer than measured is a speed 1/1.2 of it: optimism -1/6.
  EXPECT_NEAR(f.sources[0].speed_bias, 0.0125 / 0.015 - 1, 1e-9);
  EXPECT_NEAR(f.sources[1].speed_mape, 0, 1e-9);
  EXPECT_EQ(f.sources[1].memory_runs, 1);
  EXPECT_NEAR(f.sources[2].speed_mape, 0.1, 1e-9);
  EXPECT_NEAR(f.sources[2].worst_speed_error, 0.2, 1e-9);
  EXPECT_EQ(f.sources[2].runs, 2);

  const std::string summary = fidelity_summary(f);
  EXPECT_NE(summary.find("+20.0 %"), std::string::npos) << summary;
  const std::string markdown = fidelity_markdown(f);
  EXPECT_NE(markdown.find("| lab | 1 | 1 | 20.0 % |"), std::string::npos) << markdown;
  const std::string csv = fidelity_csv(f);
  EXPECT_EQ(
      csv.substr(0, csv.find('\n')),
      "scenario,source,figure,unit,measured,predicted,relative_error,predicted_by,profile_kind,reference,"
      "failure");
  EXPECT_NE(csv.find("a.yaml,lab,step_time_s,s,0.0125,0.015,0.2,gpipe,,r1,"), std::string::npos) << csv;
}

TEST(Fidelity, ARunThatCannotRunIsKeptWithWhyAndLeftOutOfTheErrors) {
  const test::TempDir dir;
  // zb-1p orders W under an activation limit: explicit costs must say what W holds, or the run is refused.
  dir.write("zb.yaml",
            "pipeline: {stages: 2, microbatches: 4}\n"
            "costs: {forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1}\n"
            "schedules: [zb-1p]\n"
            "measured: {source: lab, reference: r, step_time_s: 0.01}\n");
  const Fidelity f = run_fidelity(measured_scenarios({dir.path()}), Limits{});
  ASSERT_EQ(f.runs.size(), 1u);
  EXPECT_NE(f.runs[0].failure.find("weight_grad_activation_bytes"), std::string::npos) << f.runs[0].failure;
  EXPECT_EQ(f.sources.back().runs, 1);
  EXPECT_EQ(f.sources.back().speed_runs, 0);
  EXPECT_NE(fidelity_summary(f).find("not predicted:\n  zb.yaml: "), std::string::npos)
      << fidelity_summary(f);
}

std::string ranked_scenario(double forward_ms, double backward_ms, double step_time_s, const char* ranking) {
  return fmt::format(
      "pipeline: {{stages: 2, microbatches: 4}}\n"
      "costs: {{forward_ms: {}, backward_ms: {}}}\n"
      "schedules: [gpipe]\n"
      "measured: {{source: lab, reference: r, step_time_s: {}, ranking: {}}}\n",
      forward_ms, backward_ms, step_time_s, ranking);
}

TEST(Fidelity, RankingsCountThePairsPredictedInTheMeasuredOrder) {
  const test::TempDir dir;
  // Predicted steps are 5 (F + B): x 15 ms, y 20 ms, z 10 ms, w 17.5 ms. Measured, y beats x and w (an
  // inversion each); w ties x, so that pair says nothing; z is fastest both ways.
  dir.write("x.yaml", ranked_scenario(1, 2, 0.012, "model"));
  dir.write("y.yaml", ranked_scenario(2, 2, 0.011, "model"));
  dir.write("z.yaml", ranked_scenario(1, 1, 0.009, "model"));
  dir.write("w.yaml", ranked_scenario(1.5, 2, 0.012, "model"));
  dir.write("alone.yaml", ranked_scenario(1, 2, 0.02, "alone"));
  const Fidelity f = run_fidelity(measured_scenarios({dir.path()}), Limits{});
  ASSERT_EQ(f.rankings.size(), 2u);
  const FidelityRanking& alone = f.rankings[0];
  EXPECT_EQ(alone.ranking, "alone");
  EXPECT_EQ(alone.runs, 1);
  EXPECT_EQ(alone.pairs, 0);
  const FidelityRanking& model = f.rankings[1];
  EXPECT_EQ(model.ranking, "model");
  EXPECT_EQ(model.source, "lab");
  EXPECT_EQ(model.runs, 4);
  EXPECT_EQ(model.pairs, 5);
  EXPECT_EQ(model.ordered_as_measured, 3);
  EXPECT_EQ(model.measured_fastest, "z");
  EXPECT_EQ(model.predicted_fastest, "z");
  const std::string summary = fidelity_summary(f);
  EXPECT_NE(summary.find("3 of 5"), std::string::npos) << summary;
  EXPECT_NE(fidelity_markdown(f).find("| alone | lab | 1 | - |"), std::string::npos) << fidelity_markdown(f);
}

TEST(Fidelity, ARankingOfFasterIsHigherFiguresIsNotInverted) {
  // A rate: the higher figure is the faster run (a step time would be the other way round).
  std::vector<FidelityRun> runs(2);
  for (FidelityRun& run : runs) run.measured.ranking = "rate";
  runs[0].name = "slow";
  runs[1].name = "fast";
  runs[0].figures = {{MeasuredFigure::kMfuPercent, 30, 35}};
  runs[1].figures = {{MeasuredFigure::kMfuPercent, 40, 45}};
  const std::vector<FidelityRanking> r = fidelity_rankings(runs);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].pairs, 1);
  EXPECT_EQ(r[0].ordered_as_measured, 1);
  EXPECT_EQ(r[0].measured_fastest, "fast");
  EXPECT_EQ(r[0].predicted_fastest, "fast");
}

TEST(Fidelity, SaysWhatIsMissing) {
  const test::TempDir dir;
  EXPECT_NE(test::input_error_of([&] { measured_scenarios({dir.file("none")}); }).find("no such file"),
            std::string::npos);
  const std::string plain = dir.write("plain.yaml", fidelity_scenario(""));
  EXPECT_NE(test::input_error_of([&] { measured_scenarios({plain}); }).find("no measured: section"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([&] {
              measured_scenarios({dir.path()});
            }).find("no scenario with a measured: section"),
            std::string::npos);
}

}  // namespace
}  // namespace pipesim
