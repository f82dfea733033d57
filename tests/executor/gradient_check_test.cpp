// Every layer unit's hand-written backward (I then W) against central finite differences in double
// precision, the exp-based GELU against std::tanh, and the balanced split of units over stages.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "executor/layer_units.h"
#include "executor/model.h"
#include "sim/errors.h"

namespace pipesim::executor {
namespace {

Matrix<double> random_matrix(int rows, int cols, std::uint64_t stream) {
  Matrix<double> m(rows, cols);
  for (std::size_t i = 0; i < m.values.size(); ++i) m.values[i] = symmetric_uniform({stream, i});
  return m;
}

// |a - n| / max(|a| + |n|, floor): relative where the gradient is not tiny.
double relative_error(double analytic, double numeric) {
  return std::abs(analytic - numeric) / std::max(std::abs(analytic) + std::abs(numeric), 1e-6);
}

// Central difference of f at x[i], with step h.
double central_difference(std::vector<double>& x, std::size_t i, const std::function<double()>& f) {
  constexpr double h = 1e-5;
  const double saved = x[i];
  x[i] = saved + h;
  const double up = f();
  x[i] = saved - h;
  const double down = f();
  x[i] = saved;
  return (up - down) / (2 * h);
}

// L = sum(y * R) for a fixed random R, so dL/dy = R. Returns the largest relative error over every
// parameter and every input element.
double max_gradient_error(const LayerUnit<double>& unit, int rows) {
  std::vector<double> params(unit.parameter_count());
  unit.initialize(params, 7, 3);
  Matrix<double> x = random_matrix(rows, unit.input_width(), 11);
  const Matrix<double> r = random_matrix(rows, unit.output_width(), 13);
  auto loss = [&] {
    UnitCache<double> cache;
    const Matrix<double> y = unit.forward(params, x, cache);
    double sum = 0;
    for (std::size_t i = 0; i < y.values.size(); ++i) sum += y.values[i] * r.values[i];
    return sum;
  };
  UnitCache<double> cache;
  unit.forward(params, x, cache);
  const Matrix<double> dx = unit.backward_input(params, r, cache);
  std::vector<double> grads(params.size(), 0.0);
  unit.backward_weight(cache, grads);
  double worst = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    worst = std::max(worst, relative_error(grads[i], central_difference(params, i, loss)));
  }
  for (std::size_t i = 0; i < x.values.size(); ++i) {
    worst = std::max(worst, relative_error(dx.values[i], central_difference(x.values, i, loss)));
  }
  return worst;
}

TEST(ExecutorGradientCheck, LinearUnitMatchesFiniteDifferences) {
  const double error = max_gradient_error(LinearUnit<double>(5, 3), 4);
  RecordProperty("max_relative_error", fmt::format("{:.3e}", error));
  EXPECT_LT(error, 1e-7);
}

TEST(ExecutorGradientCheck, ResidualMlpUnitMatchesFiniteDifferences) {
  const double error = max_gradient_error(ResidualMlpUnit<double>(6, 24), 3);
  RecordProperty("max_relative_error", fmt::format("{:.3e}", error));
  EXPECT_LT(error, 1e-6);
}

TEST(ExecutorGradientCheck, SoftmaxCrossEntropyMatchesFiniteDifferences) {
  Matrix<double> logits = random_matrix(3, 5, 17);
  const std::vector<int> labels{4, 0, 2};
  Matrix<double> grad;
  softmax_cross_entropy(logits, labels, grad);
  auto loss = [&] {
    Matrix<double> unused;
    return softmax_cross_entropy(logits, labels, unused);
  };
  double worst = 0;
  for (std::size_t i = 0; i < logits.values.size(); ++i) {
    worst = std::max(worst, relative_error(grad.values[i], central_difference(logits.values, i, loss)));
  }
  EXPECT_LT(worst, 1e-7);
  // Uniform logits: the loss is log(classes) whatever the labels.
  Matrix<double> uniform(2, 5);
  EXPECT_NEAR(softmax_cross_entropy(uniform, {1, 3}, grad), std::log(5.0), 1e-15);
}

TEST(ExecutorGradientCheck, ExpBasedGeluEqualsTheTanhForm) {
  Matrix<double> z(1, 2001);
  for (int i = 0; i < z.cols; ++i) z.at(0, i) = -40.0 + 0.04 * i;  // both saturations included
  const Matrix<double> g = gelu_forward(z);
  for (int i = 0; i < z.cols; ++i) {
    const double x = z.at(0, i);
    const double expected = 0.5 * x * (1 + std::tanh(kGeluScale * (x + kGeluCubic * x * x * x)));
    ASSERT_NEAR(g.at(0, i), expected, 1e-14 * std::max(1.0, std::abs(x))) << "x = " << x;
  }
}

TEST(ExecutorBalancedSplit, SplitsByParameterCountAndKeepsEveryStageNonEmpty) {
  EXPECT_EQ(balanced_unit_split({10, 10, 10, 10}, 2), (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(balanced_unit_split({100, 1, 1, 100}, 2), (std::vector<int>{0, 2, 4}));
  EXPECT_EQ(balanced_unit_split({1, 1, 1, 100}, 2), (std::vector<int>{0, 3, 4}));
  EXPECT_EQ(balanced_unit_split({100, 1, 1, 1}, 4), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_THROW(balanced_unit_split({1, 1}, 3), InputError);
}

}  // namespace
}  // namespace pipesim::executor
