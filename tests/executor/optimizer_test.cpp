// Each optimizer's step against arithmetic done by hand on small tensors, the learning-rate schedule at its
// corners, and the state each keeps.
#include <gtest/gtest.h>

#include <cmath>

#include "executor/optim/newton_schulz.h"
#include "executor/optim/stage_updater.h"

namespace pipesim::executor {
namespace {

constexpr float kTolerance = 2e-6F;

// Runs one update with one gradient.
void step(StageUpdater& updater, std::vector<float>& w, const std::vector<float>& g) {
  updater.update(w, {&g});
}

void expect_near_all(const std::vector<float>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i)
    EXPECT_NEAR(actual[i], expected[i], kTolerance) << "index " << i;
}

const std::vector<ParameterBlock> kOneVector{
    {.offset = 0, .rows = 1, .cols = 2, .role = ParameterRole::kVector}};
// A 1 x 2 matrix, then a one-value vector.
const std::vector<ParameterBlock> kMatrixAndBias{
    {.offset = 0, .rows = 1, .cols = 2, .role = ParameterRole::kMatrix},
    {.offset = 2, .rows = 1, .cols = 1, .role = ParameterRole::kVector}};

TEST(Optimizers, SgdWithMomentumAveragesTheGradientsAndAccumulatesVelocity) {
  UpdateRule rule;
  rule.learning_rate = 0.1F;
  rule.optimizer.momentum = 0.9F;
  StageUpdater updater(rule, kOneVector, 2);
  std::vector<float> w{1.0F, -2.0F};
  const std::vector<float> g1a{0.25F, 1.5F};
  const std::vector<float> g1b{0.75F, 0.5F};  // mean (0.5, 1)
  updater.update(w, {&g1a, &g1b});
  expect_near_all(w, {1.0 - 0.1 * 0.5, -2.0 - 0.1 * 1.0});
  step(updater, w, {-1.0F, 2.0F});  // v = 0.9 * (0.5, 1) + (-1, 2) = (-0.55, 2.9)
  expect_near_all(w, {0.95 + 0.055, -2.1 - 0.29});
  EXPECT_EQ(updater.state_bytes(), 2 * 4);
}

TEST(Optimizers, AdamWCorrectsTheBiasAndDecaysOnlyTheMatrix) {
  UpdateRule rule;
  rule.learning_rate = 0.01F;
  rule.optimizer.kind = OptimizerKind::kAdamW;
  rule.optimizer.weight_decay = 0.1F;
  StageUpdater updater(rule, kMatrixAndBias, 3);
  std::vector<float> w{1.0F, -2.0F, 0.5F};
  // Step 1: m_hat = g, v_hat = g^2, so u = sign(g) (+ 0.1 W on the matrix).
  step(updater, w, {0.3F, -0.4F, 0.2F});
  const std::vector<double> w1{1.0 - 0.01 * (1.0 + 0.1 * 1.0), -2.0 - 0.01 * (-1.0 + 0.1 * -2.0),
                               0.5 - 0.01 * 1.0};
  expect_near_all(w, w1);
  // Step 2 with g2 = (0.1, 0.2, -0.2): m = 0.9 * 0.1 g1 + 0.1 g2, v = 0.95 * 0.05 g1^2 + 0.05 g2^2.
  step(updater, w, {0.1F, 0.2F, -0.2F});
  const double m[] = {0.09 * 0.3 + 0.1 * 0.1, 0.09 * -0.4 + 0.1 * 0.2, 0.09 * 0.2 + 0.1 * -0.2};
  const double v[] = {0.0475 * 0.09 + 0.05 * 0.01, 0.0475 * 0.16 + 0.05 * 0.04, 0.0475 * 0.04 + 0.05 * 0.04};
  const double c1 = 1 - 0.81;
  const double c2 = 1 - 0.9025;
  std::vector<double> w2(3);
  for (int i = 0; i < 3; ++i) {
    const double decay = i < 2 ? 0.1 * w1[i] : 0.0;
    w2[i] = w1[i] - 0.01 * ((m[i] / c1) / (std::sqrt(v[i] / c2) + 1e-8) + decay);
  }
  expect_near_all(w, w2);
  EXPECT_EQ(updater.state_bytes(), 2 * 3 * 4);
}

TEST(Optimizers, NAdamLooksOneMomentumStepAhead) {
  UpdateRule rule;
  rule.learning_rate = 0.01F;
  rule.optimizer.kind = OptimizerKind::kNAdam;
  StageUpdater updater(rule, kOneVector, 2);
  std::vector<float> w{1.0F, -2.0F};
  // Step 1: m = 0.1 g, v_hat = g^2; u = (0.9 * 0.1 g / (1 - 0.81) + 0.1 g / 0.1) / |g|.
  step(updater, w, {0.3F, -0.4F});
  const double factor = 0.09 / 0.19 + 1.0;
  expect_near_all(w, {1.0 - 0.01 * factor, -2.0 + 0.01 * factor});
}

// The Newton-Schulz polynomial on one singular value, five times.
double newton_schulz_singular_value(double sigma) {
  for (int i = 0; i < 5; ++i)
    sigma = 3.4445 * sigma - 4.7750 * std::pow(sigma, 3) + 2.0315 * std::pow(sigma, 5);
  return sigma;
}

TEST(Optimizers, NewtonSchulzMapsEachSingularValueThroughItsPolynomial) {
  // diag(3, 4): Frobenius norm 5, singular values 0.6 and 0.8 after normalising; the off-diagonal stays 0.
  std::vector<float> g{3.0F, 0.0F, 0.0F, 4.0F};
  newton_schulz(g, 2, 2, 5);
  expect_near_all(g, {newton_schulz_singular_value(0.6), 0.0, 0.0, newton_schulz_singular_value(0.8)});
  // A column (2 x 1, the transposed path): one singular value, 1 after normalising.
  std::vector<float> column{3.0F, 4.0F};
  newton_schulz(column, 2, 1, 5);
  const double s = newton_schulz_singular_value(1.0);
  expect_near_all(column, {0.6 * s, 0.8 * s});
}

TEST(Optimizers, MuonOrthogonalisesNesterovMomentumAndUsesAdamWForVectors) {
  UpdateRule rule;
  rule.learning_rate = 0.02F;
  rule.optimizer.kind = OptimizerKind::kMuon;
  rule.optimizer.momentum = 0.95F;
  rule.optimizer.adamw_lr_ratio = 0.5F;
  StageUpdater updater(rule, kMatrixAndBias, 3);
  std::vector<float> w{1.0F, -2.0F, 0.5F};
  // Matrix (1 x 2: one input, two outputs): buffer = g, Nesterov g + 0.95 g, normalised (0.6, 0.8); one
  // singular value 1 -> p^5(1); scale sqrt(max(1, 2 / 1)). Bias: AdamW's first step is sign(g), times 0.5.
  step(updater, w, {3.0F, 4.0F, -0.2F});
  const double s = newton_schulz_singular_value(1.0) * std::sqrt(2.0);
  expect_near_all(w, {1.0 - 0.02 * 0.6 * s, -2.0 - 0.02 * 0.8 * s, 0.5 + 0.02 * 0.5});
  // State: the matrix's momentum (2 values) and the bias's two moments (1 value each).
  EXPECT_EQ(updater.state_bytes(), (2 + 2 * 1) * 4);
}

TEST(Optimizers, LionStepsBySignOfTheInterpolatedMomentumAndDecaysTheMatrix) {
  UpdateRule rule;
  rule.learning_rate = 0.01F;
  rule.optimizer.kind = OptimizerKind::kLion;
  rule.optimizer.beta1 = 0.9F;
  rule.optimizer.beta2 = 0.99F;
  rule.optimizer.weight_decay = 0.1F;
  StageUpdater updater(rule, kMatrixAndBias, 3);
  std::vector<float> w{1.0F, -2.0F, 0.5F};
  // Step 1: m = 0, so u = sign(0.1 g) = (1, -1, 1), plus 0.1 W on the matrix; then m = 0.01 g.
  step(updater, w, {0.3F, -0.4F, 0.2F});
  expect_near_all(w, {1.0 - 0.01 * 1.1, -2.0 - 0.01 * -1.2, 0.5 - 0.01});
  // Step 2: 0.9 m + 0.1 g = (0.0027 - 0.001, -0.0036 + 0.0001, 0.0018 - 0.03): the first component's sign is
  // the momentum's (+), not the gradient's (-).
  step(updater, w, {-0.01F, 0.001F, -0.3F});
  expect_near_all(w, {0.989 - 0.01 * (1 + 0.1 * 0.989), -1.988 - 0.01 * (-1 + 0.1 * -1.988), 0.49 + 0.01});
  EXPECT_EQ(updater.state_bytes(), 3 * 4);
}

TEST(Optimizers, AdanCombinesTheGradientAndItsDifferenceAsTheAuthorsStepIt) {
  UpdateRule rule;
  rule.learning_rate = 0.1F;
  rule.optimizer.kind = OptimizerKind::kAdan;
  rule.optimizer.beta1 = 0.98F;
  rule.optimizer.beta2 = 0.92F;
  rule.optimizer.beta3 = 0.99F;
  StageUpdater updater(rule, kOneVector, 2);
  std::vector<float> w{1.0F, -2.0F};
  // Step 1: no difference yet; m = 0.02 g, n = 0.01 g^2, bias-corrected: u = g / |g| = (1, -1).
  step(updater, w, {0.5F, -1.0F});
  expect_near_all(w, {0.9, -1.9});
  // Step 2, g = (1.5, 1): d = (1, 2); m = 0.98 m + 0.02 g; v = 0.08 d; n = 0.99 n + 0.01 (g + 0.92 d)^2;
  // u = (m / (1 - 0.98^2) + 0.92 v / (1 - 0.92^2)) / (sqrt(n / (1 - 0.99^2)) + eps).
  step(updater, w, {1.5F, 1.0F});
  const double m[] = {0.98 * 0.01 + 0.02 * 1.5, 0.98 * -0.02 + 0.02 * 1.0};
  const double v[] = {0.08 * 1.0, 0.08 * 2.0};
  const double n[] = {0.99 * 0.0025 + 0.01 * 2.42 * 2.42, 0.99 * 0.01 + 0.01 * 2.84 * 2.84};
  std::vector<double> expected{0.9, -1.9};
  for (int i = 0; i < 2; ++i) {
    const double u = (m[i] / (1 - 0.98 * 0.98) + 0.92 * v[i] / (1 - 0.92 * 0.92)) /
                     (std::sqrt(n[i] / (1 - 0.99 * 0.99)) + 1e-8);
    expected[i] -= 0.1 * u;
  }
  expect_near_all(w, expected);
  EXPECT_EQ(updater.state_bytes(), 4 * 2 * 4);  // m, v, n and the previous gradient
}

TEST(Optimizers, LearningRateWarmsUpLinearlyThenDecaysByCosineToTheFloor) {
  const LrSchedule schedule{.warmup_fraction = 0.1, .floor_ratio = 0.1, .total_microbatches = 100};
  EXPECT_NEAR(schedule.at(2.0F, 5), 1.0, 1e-6);    // half-way through the warm-up
  EXPECT_NEAR(schedule.at(2.0F, 10), 2.0, 1e-6);   // the peak
  EXPECT_NEAR(schedule.at(2.0F, 55), 1.1, 1e-6);   // half-way down: 0.2 + 1.8 * 0.5
  EXPECT_NEAR(schedule.at(2.0F, 100), 0.2, 1e-6);  // the floor
  EXPECT_NEAR(schedule.at(2.0F, 130), 0.2, 1e-6);  // stays there
  EXPECT_EQ(LrSchedule{}.at(2.0F, 1000), 2.0F);    // no schedule: constant
}

TEST(Optimizers, NamesRoundTripAndUnknownNamesListTheAllowedOnes) {
  for (const char* name : {"sgd", "adamw", "nadam", "muon", "lion", "adan", "soap"})
    EXPECT_EQ(optimizer_kind_name(parse_optimizer_kind(name)), name);
  for (const char* name : {"none", "error-feedback", "weight-prediction"})
    EXPECT_EQ(delay_correction_name(parse_delay_correction(name)), name);
  try {
    parse_optimizer_kind("adam");
    FAIL();
  } catch (const std::invalid_argument& e) {
    // Every optimizer is named, from the one table (the list once lacked lion and adan).
    for (const std::string& name : optimizer_kind_names())
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos);
  }
}

}  // namespace
}  // namespace pipesim::executor
