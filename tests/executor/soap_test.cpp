// SOAP's step against one worked by hand, its equivalence with AdamW one step behind when the bases stay the
// coordinate axes, and its equivariance under rotations of the gradients (which AdamW lacks).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "executor/optim/stage_updater.h"

namespace pipesim::executor {
namespace {

void soap_step(StageUpdater& updater, std::vector<float>& w, const std::vector<float>& g) {
  updater.update(w, {&g});
}

UpdateRule soap_rule(int frequency) {
  UpdateRule rule;
  rule.learning_rate = 0.1F;
  rule.optimizer = optimizer_with_defaults(OptimizerKind::kSoap);
  rule.optimizer.precondition_frequency = frequency;
  return rule;
}

TEST(Soap, FirstStepOnlyBuildsTheBasesThenAdamRunsInThem) {
  const std::vector<ParameterBlock> blocks{
      {.offset = 0, .rows = 2, .cols = 2, .role = ParameterRole::kMatrix}};
  StageUpdater updater(soap_rule(10), blocks, 4);
  std::vector<float> w{1.0F, 2.0F, 3.0F, 4.0F};
  // Step 1, G1 = [[1, 1], [1, 1]]: L = R = 0.05 G1 G1ᵀ, eigenvectors (1, 1)/√2 and (1, -1)/√2; no update.
  soap_step(updater, w, {1.0F, 1.0F, 1.0F, 1.0F});
  EXPECT_EQ(w, (std::vector<float>{1.0F, 2.0F, 3.0F, 4.0F}));
  // Step 2 (k = 1), G2 = [[1, 0], [0, 0]]: M / c1 = G2, rotated Q G2 Q = ±[[.5, .5], [.5, .5]]; V / c2 = its
  // square, so N' = ±[[1, 1], [1, 1]] (times 0.5 / (0.5 + eps)) and u = Q N' Qᵀ = [[2, 0], [0, 0]]. AdamW
  // would step [[1, 0], [0, 0]]: the rotation spreads the preconditioning over the basis.
  soap_step(updater, w, {1.0F, 0.0F, 0.0F, 0.0F});
  const double scale = 0.5 / (0.5 + 1e-8);
  EXPECT_NEAR(w[0], 1.0 - 0.1 * 2.0 * scale, 1e-6);
  for (int i = 1; i < 4; ++i) EXPECT_NEAR(w[i], i + 1.0, 1e-6) << i;
  // State: M, V (4 each), L, R, Q_L, Q_R (4 each).
  EXPECT_EQ(updater.state_bytes(), (2 * 4 + 4 * 4) * 4);
}

TEST(Soap, WithDiagonalGradientsItIsAdamWOneStepBehind) {
  // Diagonal gradients with descending entries keep L and R diagonal and descending: the bases stay the
  // axes (up to sign), so SOAP is AdamW on gradients 2..T, the vector block too.
  const std::vector<ParameterBlock> blocks{
      {.offset = 0, .rows = 3, .cols = 3, .role = ParameterRole::kMatrix},
      {.offset = 9, .rows = 1, .cols = 2, .role = ParameterRole::kVector}};
  UpdateRule adam_rule = soap_rule(1);
  adam_rule.optimizer.kind = OptimizerKind::kAdamW;
  StageUpdater soap(soap_rule(1), blocks, 11);
  StageUpdater adam(adam_rule, blocks, 11);
  std::vector<float> w_soap(11, 0.5F), w_adam(11, 0.5F);
  std::mt19937 random(7);
  std::uniform_real_distribution<float> unit(0.0F, 1.0F);
  for (int t = 1; t <= 12; ++t) {
    std::vector<float> g(11, 0.0F);
    const float a = 3.0F + unit(random), b = 2.0F + unit(random), c = 1.0F + unit(random);
    g[0] = a;
    g[4] = (t % 2 == 0 ? -1.0F : 1.0F) * b;  // signs do not change the order of G Gᵀ's entries
    g[8] = c;
    g[9] = unit(random) - 0.5F;
    g[10] = unit(random) - 0.5F;
    soap_step(soap, w_soap, g);
    if (t > 1) soap_step(adam, w_adam, g);
  }
  for (int i = 0; i < 11; ++i) EXPECT_NEAR(w_soap[i], w_adam[i], 2e-5) << i;
}

// Row-major products of small dense matrices for the equivariance test.
std::vector<float> multiply(const std::vector<float>& a, const std::vector<float>& b, int n, int k, int m) {
  std::vector<float> c(static_cast<std::size_t>(n * m), 0.0F);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int p = 0; p < k; ++p) c[i * m + j] += a[i * k + p] * b[p * m + j];
  return c;
}

TEST(Soap, RotatingEveryGradientRotatesTheWeightsOfARectangularMatrix) {
  // Gradients A G B (A, B orthogonal, fixed) give weights A W B from W = 0: L and R rotate with them, their
  // bases too, and Adam in the bases sees the same coordinates. AdamW's per-coordinate scaling does not.
  const int r = 2, c = 3;
  const std::vector<ParameterBlock> blocks{
      {.offset = 0, .rows = r, .cols = c, .role = ParameterRole::kMatrix}};
  const double angle = 0.7;
  const std::vector<float> a{static_cast<float>(std::cos(angle)), static_cast<float>(-std::sin(angle)),
                             static_cast<float>(std::sin(angle)), static_cast<float>(std::cos(angle))};
  // B: a rotation in the (0, 1) plane composed with swapping axes 1 and 2 (orthogonal, not a rotation).
  const float cb = static_cast<float>(std::cos(0.4)), sb = static_cast<float>(std::sin(0.4));
  const std::vector<float> b{cb, 0.0F, -sb, sb, 0.0F, cb, 0.0F, 1.0F, 0.0F};
  for (const OptimizerKind kind : {OptimizerKind::kSoap, OptimizerKind::kAdamW}) {
    UpdateRule rule = soap_rule(2);
    rule.optimizer.kind = kind;
    StageUpdater plain(rule, blocks, r * c);
    StageUpdater rotated(rule, blocks, r * c);
    std::vector<float> w_plain(r * c, 0.0F), w_rotated(r * c, 0.0F);
    std::mt19937 random(11);
    std::normal_distribution<float> normal(0.0F, 1.0F);
    for (int t = 1; t <= 9; ++t) {
      std::vector<float> g(r * c);
      for (float& x : g) x = normal(random);
      soap_step(plain, w_plain, g);
      soap_step(rotated, w_rotated, multiply(multiply(a, g, r, r, c), b, r, c, c));
    }
    const std::vector<float> expected = multiply(multiply(a, w_plain, r, r, c), b, r, c, c);
    double worst = 0;
    for (int i = 0; i < r * c; ++i) worst = std::max(worst, std::abs(double(w_rotated[i]) - expected[i]));
    if (kind == OptimizerKind::kSoap) {
      EXPECT_LT(worst, 1e-4) << "SOAP is equivariant under rotations of the gradient";
    } else {
      EXPECT_GT(worst, 1e-2) << "AdamW is not (the test can tell the two apart)";
    }
  }
}

}  // namespace
}  // namespace pipesim::executor
