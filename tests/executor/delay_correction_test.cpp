// Delay correction on the quadratic f(w) = h w^2 / 2 with SGD and a one-step delay (the gradient applied at
// step k was taken at w_{k-1}), against closed forms. With c = lr * h:
//  - plain delay: w_{k+1} = w_k - c w_{k-1}, characteristic r^2 - r + c;
//  - error feedback, W <- W - lr (2 u_k - u_{k-1}), and weight prediction (the forward at w_j reads
//    w_j - lr u_{j-1} = 2 w_j - w_{j-1}) both give w_{k+1} = w_k - c (2 w_{k-1} - w_{k-2}), characteristic
//    r^3 - r^2 + 2c r - c.
// c = 4/9 makes the roots exact: 1/2 +- i sqrt(7)/6 for the first; 2/3 and 1/6 +- i sqrt(23)/6 for the second
// (sum 1, pairwise sum 8/9 = 2c, product 4/9 = c).
#include <gtest/gtest.h>

#include <array>
#include <complex>

#include "executor/optim/stage_updater.h"

namespace pipesim::executor {
namespace {

using Complex = std::complex<double>;
constexpr double kH = 2.0;
constexpr double kLr = 2.0 / 9.0;  // c = lr * h = 4/9
constexpr int kSteps = 40;

StageUpdater sgd(DelayCorrection correction) {
  UpdateRule rule;
  rule.learning_rate = static_cast<float>(kLr);
  rule.correction = correction;
  return {rule, {{.offset = 0, .rows = 1, .cols = 1, .role = ParameterRole::kVector}}, 1};
}

// w_k = sum_i a_i r_i^k through the given first values w_0.. (a Vandermonde system, solved by Cramer's rule
// for 2 or 3 roots).
template <std::size_t N>
std::vector<double> closed_form(const std::array<Complex, N>& roots, const std::array<double, N>& first) {
  auto det = [](const std::array<std::array<Complex, N>, N>& m) {
    if constexpr (N == 2) {
      return m[0][0] * m[1][1] - m[0][1] * m[1][0];
    } else {
      return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
             m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
             m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
    }
  };
  std::array<std::array<Complex, N>, N> v{};
  for (std::size_t k = 0; k < N; ++k) {
    for (std::size_t i = 0; i < N; ++i) v[k][i] = std::pow(roots[i], static_cast<double>(k));
  }
  const Complex d = det(v);
  std::array<Complex, N> a{};
  for (std::size_t i = 0; i < N; ++i) {
    auto m = v;
    for (std::size_t k = 0; k < N; ++k) m[k][i] = first[k];
    a[i] = det(m) / d;
  }
  std::vector<double> w;
  for (int k = 0; k <= kSteps; ++k) {
    Complex sum = 0;
    for (std::size_t i = 0; i < N; ++i) sum += a[i] * std::pow(roots[i], static_cast<double>(k));
    w.push_back(sum.real());
  }
  return w;
}

// Runs the delayed loop: the gradient applied at step k was taken by the forward at version k-1 (the
// initial weights for k = 0), which reads updater.predicted(w, 1) (w itself unless predicting).
std::vector<double> delayed_trajectory(DelayCorrection correction) {
  StageUpdater updater = sgd(correction);
  std::vector<float> w{1.0F};
  std::vector<float> pending{static_cast<float>(kH) * w[0]};
  std::vector<double> out{w[0]};
  for (int k = 0; k < kSteps; ++k) {
    const std::vector<float> read =
        correction == DelayCorrection::kWeightPrediction ? updater.predicted(w, 1) : w;
    const std::vector<float> next_gradient{static_cast<float>(kH) * read[0]};
    updater.update(w, {&pending});
    pending = next_gradient;
    out.push_back(w[0]);
  }
  return out;
}

void expect_trajectory(const std::vector<double>& actual, const std::vector<double>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t k = 0; k < actual.size(); ++k) EXPECT_NEAR(actual[k], expected[k], 1e-6) << "step " << k;
}

// w_0 = 1, w_1 = w_0 - c w_0 = 5/9 (the first gradient is the initial one), w_2 = w_1 - c w_0 = 1/9.
constexpr double kC = 4.0 / 9.0;

TEST(DelayCorrection, OneStepDelayFollowsItsTwoRootClosedForm) {
  const std::array<Complex, 2> roots{Complex(0.5, std::sqrt(7.0) / 6), Complex(0.5, -std::sqrt(7.0) / 6)};
  expect_trajectory(delayed_trajectory(DelayCorrection::kNone), closed_form<2>(roots, {1.0, 1.0 - kC}));
}

const std::array<Complex, 3> kCorrectedRoots{Complex(2.0 / 3, 0), Complex(1.0 / 6, std::sqrt(23.0) / 6),
                                             Complex(1.0 / 6, -std::sqrt(23.0) / 6)};

TEST(DelayCorrection, ErrorFeedbackFollowsItsThreeRootClosedForm) {
  // The first step has no u_{-1} and takes u_0 alone: w_2 = w_1 - c (2 w_0 - w_0).
  expect_trajectory(delayed_trajectory(DelayCorrection::kErrorFeedback),
                    closed_form<3>(kCorrectedRoots, {1.0, 1.0 - kC, 1.0 - 2 * kC}));
}

TEST(DelayCorrection, WeightPredictionFollowsTheSameClosedForm) {
  // The forward at w_0 has nothing to predict with: w_2 = w_1 - c w_0.
  expect_trajectory(delayed_trajectory(DelayCorrection::kWeightPrediction),
                    closed_form<3>(kCorrectedRoots, {1.0, 1.0 - kC, 1.0 - 2 * kC}));
}

}  // namespace
}  // namespace pipesim::executor
