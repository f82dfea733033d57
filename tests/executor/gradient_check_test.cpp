// Every layer unit's hand-written backward (I then W) against central finite differences in double
// precision, the exp-based GELU against std::tanh, and the balanced split of units over stages.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <functional>

#include "base/errors.h"
#include "executor/layer_units.h"
#include "executor/model.h"
#include "tests/executor/gradient_check_util.h"

namespace pipesim::executor {
namespace {

using test::central_difference;
using test::max_gradient_error;
using test::random_matrix;
using test::relative_error;

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

double tanh_gelu(double x) {
  return 0.5 * x * (1 + std::tanh(kGeluScale * (x + kGeluCubic * x * x * x)));
}

TEST(ExecutorGradientCheck, ExpBasedGeluEqualsTheTanhForm) {
  Matrix<double> z(1, 2001);
  for (int i = 0; i < z.cols; ++i) z.at(0, i) = -40.0 + 0.04 * i;  // both saturations included
  const Matrix<double> g = gelu_forward(z);
  for (int i = 0; i < z.cols; ++i) {
    const double x = z.at(0, i);
    ASSERT_NEAR(g.at(0, i), tanh_gelu(x), 1e-14 * std::max(1.0, std::abs(x))) << "x = " << x;
  }
}

// The fp32 GELU (rational tanh, vectorisable) against the std::tanh form in double: within a few fp32 ulp
// of the value (or of 1 near zero), over both saturations and the dense middle; its derivative likewise.
TEST(ExecutorGradientCheck, Fp32RationalGeluMatchesTheStdTanhForm) {
  Matrix<float> z(1, 40001);
  for (int i = 0; i < z.cols; ++i) z.at(0, i) = static_cast<float>(-20.0 + 0.001 * i);
  const Matrix<float> g = gelu_forward(z);
  Matrix<float> ones(1, z.cols);
  for (float& v : ones.values) v = 1.0F;
  const Matrix<float> slope = gelu_input_grad(ones, z);
  double worst_value = 0;
  double worst_slope = 0;
  for (int i = 0; i < z.cols; ++i) {
    const double x = z.at(0, i);
    const double scale = std::max(1.0, std::abs(x));
    worst_value = std::max(worst_value, std::abs(g.at(0, i) - tanh_gelu(x)) / scale);
    const double h = 1e-6;
    const double exact_slope = (tanh_gelu(x + h) - tanh_gelu(x - h)) / (2 * h);
    worst_slope = std::max(worst_slope, std::abs(slope.at(0, i) - exact_slope) / scale);
  }
  RecordProperty("max_value_error", fmt::format("{:.3e}", worst_value));
  RecordProperty("max_slope_error", fmt::format("{:.3e}", worst_slope));
  EXPECT_LT(worst_value, 1e-6);
  EXPECT_LT(worst_slope, 2e-5);  // the rational tanh enters 1 - t^2, scaled by x
  // Both saturations: GELU(x) = x far right, 0 far left, to fp32 precision (the clamp rounds once).
  EXPECT_EQ(gelu_forward(Matrix<float>{1, 1}).at(0, 0), 0.0F);
  Matrix<float> far(1, 2);
  far.values = {30.0F, -30.0F};
  const Matrix<float> saturated = gelu_forward(far);
  EXPECT_NEAR(saturated.at(0, 0), 30.0F, 1e-5);
  EXPECT_NEAR(saturated.at(0, 1), 0.0F, 1e-5);
}

TEST(ExecutorBlas, OneThreadPerWorker) {
  use_single_blas_thread();
  EXPECT_EQ(blas_thread_count(), 1);
}

// The tests' main ran prepare_process (cli/process_setup.h): on a CPU with AVX2 and FMA, OpenBLAS must not be
// left on the SSE3 kernels it falls back to for CPU models it does not know.
TEST(ExecutorBlas, RunsTheKernelsTheCpuSupports) {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) GTEST_SKIP() << "no AVX2 + FMA";
  const bool chosen_by_user =
      std::getenv("OPENBLAS_CORETYPE") != nullptr && std::getenv(kBlasCoreChosenMarker) == nullptr;
  if (chosen_by_user) GTEST_SKIP() << "OPENBLAS_CORETYPE set by the user";
  EXPECT_FALSE(is_fallback_blas_core(blas_core_name())) << blas_core_name();
  EXPECT_EQ(better_blas_core_type(), "");  // nothing left to improve
}

TEST(ExecutorBlas, FallbackKernelSetsAreTheGenericOnesInAnyCase) {
  for (const char* name : {"Prescott", "prescott", "CORE2", "Nehalem"})
    EXPECT_TRUE(is_fallback_blas_core(name));
  for (const char* name : {"Haswell", "SkylakeX", "Cooperlake", "Zen", ""})
    EXPECT_FALSE(is_fallback_blas_core(name));
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
