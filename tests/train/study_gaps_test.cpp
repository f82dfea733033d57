// Paired per-seed gaps on hand-made curves: which flush each group pairs with, the gap per seed and point,
// its mean and spread, the noise floor between two flushes, and the CSV the plot reads.
#include "train/study_gaps.h"

#include <gtest/gtest.h>

#include <cmath>

#include "train/study_config.h"

namespace pipesim {
namespace {

constexpr const char* kStudy = R"(name: pairs
task: teacher-mlp
model: {input_width: 8, width: 8, blocks: 0, classes: 3}
target_setting: {scenario: scenarios/paci/gpt2-medium-8stage.yaml}
stages: 2
global_batches: [16]
sample_budget: 64
eval_every_samples: 32
validation_samples: 32
seeds: [1, 2]
optimizers:
  - {name: adamw, lr: 0.01}
schedules:
  - {name: 1f1b-flush, microbatches: 2}
  - {name: 1f1b-flush, microbatches: 4}
  - {name: paci, accumulation: 4, microbatches: 4}
  - {name: pipedream-2bw, microbatches: 8}
targets: {loss: 5.0}
)";

// Points at 0, 32 and 64 samples with these validation losses; steps = samples / 16.
std::vector<CurvePoint> losses(double a, double b, double c) {
  std::vector<CurvePoint> points;
  const double values[] = {a, b, c};
  for (int i = 0; i < 3; ++i) points.push_back({32 * i, 2 * i, 0, values[i], 0, 0, 0});
  return points;
}

TEST(StudyGaps, EachGroupPairsWithTheFlushAtItsMSeedBySeed) {
  const Study study = parse_study(kStudy, "s.yaml", false);
  const std::vector<StudyRun> runs = study_runs(study);
  ASSERT_EQ(runs.size(), 8U);  // flush m=2, flush m=4, paci a=4, 2bw m=8; 2 seeds each
  StudyCurves curves;
  curves[runs[0].key()] = losses(4, 3.0, 2.0);  // flush m=2, seed 1
  curves[runs[1].key()] = losses(4, 3.2, 2.2);  // seed 2
  curves[runs[2].key()] = losses(4, 3.1, 2.0);  // flush m=4, seed 1
  curves[runs[3].key()] = losses(4, 3.1, 2.3);  // seed 2
  curves[runs[4].key()] = losses(4, 3.5, 2.4);  // paci a=4 m=4, seed 1: +0.4, +0.4 over flush m=4
  curves[runs[5].key()] = losses(4, 3.3, 2.5);  // seed 2: +0.2, +0.2
  curves[runs[6].key()] = losses(4, 3.6, 2.1);  // 2bw m=8: no flush at m=8, so the first (m=2): +0.6, +0.1
  curves[runs[7].key()] = losses(4, 3.4, 2.5);  //   +0.2, +0.3
  const std::vector<PairedGap> gaps = paired_gaps(study, curves);
  ASSERT_EQ(gaps.size(), 3U);
  const PairedGap& paci = gaps[0];
  EXPECT_EQ(paci.schedule, "paci:accumulation=4 m=4");
  EXPECT_EQ(paci.reference_schedule, "1f1b-flush m=4");
  EXPECT_FALSE(paci.noise_floor);
  EXPECT_EQ(paci.seeds, (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(paci.samples, (std::vector<std::int64_t>{0, 32, 64}));
  EXPECT_EQ(paci.reference_steps, (std::vector<std::int64_t>{0, 2, 4}));
  EXPECT_DOUBLE_EQ(paci.gap_by_seed[0][0], 0.0);
  EXPECT_NEAR(paci.gap_by_seed[1][2], 0.2, 1e-12);
  EXPECT_NEAR(paci.final_mean, 0.3, 1e-12);
  EXPECT_NEAR(paci.final_sd, std::sqrt(0.02), 1e-12);  // values 0.4 and 0.2: (0.1² + 0.1²) / 1
  const PairedGap& two_bw = gaps[1];
  EXPECT_EQ(two_bw.reference_schedule, "1f1b-flush m=2");
  EXPECT_NEAR(two_bw.final_mean, 0.2, 1e-12);
  const PairedGap& floor = gaps[2];
  EXPECT_TRUE(floor.noise_floor);
  EXPECT_EQ(floor.schedule, "1f1b-flush m=2");
  EXPECT_EQ(floor.reference_schedule, "1f1b-flush m=4");
  EXPECT_NEAR(floor.final_mean, (0.0 - 0.1) / 2, 1e-12);  // 2.0 - 2.0 and 2.2 - 2.3
  // PACI a = 4 at N = 2: Δ_1 <= ceil((N - 1) / a) = 1; 2BW reads a stashed version in both passes (Δ 0)
  // one step old (τ 1); a flush: 0 and 0.
  EXPECT_EQ(paci.delta_max, 1);
  EXPECT_EQ(two_bw.delta_max, 0);
  EXPECT_EQ(two_bw.tau_max, 1);
  EXPECT_EQ(floor.delta_max, 0);
  EXPECT_EQ(floor.tau_max, 0);
  const std::string table = format_paired_gap_table(gaps);
  EXPECT_NE(table.find("| 16 | paci:accumulation=4 m=4 | adamw | none | 1f1b-flush m=4 | 1 | 1 | 2 | "),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("+0.3000 ± 0.1414 (4 steps) |"), std::string::npos) << table;
  EXPECT_NE(table.find("1f1b-flush m=4 (noise floor)"), std::string::npos) << table;
  const std::string csv = paired_gap_csv(gaps);
  EXPECT_EQ(
      csv.substr(0, csv.find('\n')),
      "global_batch,schedule,optimizer,correction,paired_with,noise_floor,delta_max,tau_max,seed,samples,"
      "reference_steps,gap");
  EXPECT_NE(csv.find("16,paci:accumulation=4 m=4,adamw,none,1f1b-flush m=4,0,1,1,2,64,4,0.2"),
            std::string::npos)
      << csv;
  // 3 pairs x 2 seeds x 3 points, and the header.
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 19);
}

TEST(StudyGaps, APerMicrobatchStepperPairsWithItsStepRateBaseline) {
  std::string text = kStudy;
  text.replace(text.find("  - {name: paci"),
               std::string("  - {name: paci, accumulation: 4, microbatches: 4}\n").size(),
               "  - {name: pipedream, microbatches: 4}\n");
  text += "same_step_rate_flush: true\n";
  const Study study = parse_study(text, "s.yaml", false);
  const std::vector<StudyRun> runs = study_runs(study);
  ASSERT_EQ(runs.size(), 10U);  // flush m=2, m=4, pipedream m=4, 2bw m=8, then the baseline at B = 4, m = 1
  EXPECT_EQ(runs[8].key(), "B=4 1f1b-flush m=1 step-rate-baseline adamw none seed=1");
  StudyCurves curves;
  for (const StudyRun& run : runs) curves[run.key()] = losses(4, 3, 2);
  curves[runs[4].key()] = losses(4, 3.5, 2.5);  // pipedream seed 1
  curves[runs[8].key()] = losses(4, 3.0, 2.1);  // its baseline: +0.4 at the end, a step per 4 samples
  for (CurvePoint& p : curves[runs[8].key()]) p.steps = p.samples / 4;
  const std::vector<PairedGap> gaps = paired_gaps(study, curves);
  ASSERT_FALSE(gaps.empty());
  EXPECT_EQ(gaps[0].schedule, "pipedream m=4");
  EXPECT_EQ(gaps[0].reference_schedule, "1f1b-flush m=1 step-rate-baseline");
  EXPECT_NEAR(gaps[0].gap_by_seed[0].back(), 0.4, 1e-12);
  EXPECT_EQ(gaps[0].reference_steps.back(), 16);  // the baseline's steps: 64 samples of B = 4
}

TEST(StudyGaps, NothingToPairGivesNoTable) {
  const Study study = parse_study(kStudy, "s.yaml", false);
  StudyCurves curves;
  curves[study_runs(study)[4].key()] = losses(4, 3, 2);  // PACI alone: no flush ran
  EXPECT_TRUE(paired_gaps(study, curves).empty());
  EXPECT_EQ(format_paired_gap_table({}), "");
}

}  // namespace
}  // namespace pipesim
