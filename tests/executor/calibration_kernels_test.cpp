// The executor's kernels as `calibrate --cpu` measures them: the GEMM callback computes each layout's
// product with the executor's accumulation (nn and tn add to C, nt overwrites it), and every element-wise
// kernel and update runs.
#include "executor/costs/calibration_kernels.h"

#include <gtest/gtest.h>

#include <set>

namespace pipesim {
namespace {

TEST(CalibrationKernels, GemmLayoutsComputeTheirProducts) {
  CpuCalibrationOptions options;
  use_executor_kernels(options);
  EXPECT_EQ(options.gemm_layouts, (std::vector<std::string>{"nn", "nt", "tn"}));
  const long m = 3, n = 5, k = 4;
  std::vector<float> a(m * k), b(k * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 5) - 2;
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 3) - 1;
  for (const std::string layout : {"nn", "nt", "tn"}) {
    std::vector<float> c(m * n, 10.0F);
    options.gemm(layout, a.data(), b.data(), c.data(), m, n, k);
    for (long i = 0; i < m; ++i) {
      for (long j = 0; j < n; ++j) {
        float expected = layout == "nt" ? 0.0F : 10.0F;
        for (long p = 0; p < k; ++p) {
          const float a_ip = layout == "tn" ? a[p * m + i] : a[i * k + p];  // A stored k x m for tn
          const float b_pj = layout == "nt" ? b[j * k + p] : b[p * n + j];  // B stored n x k for nt
          expected += a_ip * b_pj;
        }
        EXPECT_EQ(c[i * n + j], expected) << layout << " " << i << "," << j;  // small integers: exact
      }
    }
  }
}

TEST(CalibrationKernels, EveryKernelAndUpdateRuns) {
  CpuCalibrationOptions options;
  use_executor_kernels(options);
  std::set<std::string> names;
  for (const CpuElementwiseKernel& kernel : options.elementwise) {
    names.insert(kernel.name);
    kernel.prepare(1000)();
  }
  namespace k = executor_kernels;
  for (const char* name : {k::kLayerNormForward, k::kLayerNormInputGrad, k::kLayerNormWeightGrad,
                           k::kGeluForward, k::kGeluInputGrad, k::kBiasFill, k::kBiasGrad, k::kAdd, k::kCopy,
                           k::kZeroFill, k::kSoftmaxCrossEntropy, k::kTeacherData})
    EXPECT_EQ(names.count(name), 1u) << name;
  std::set<std::string> optimizers;
  for (const CpuUpdateKernel& update : options.updates) {
    optimizers.insert(update.optimizer);
    update.prepare(100, 3, nullptr)();
  }
  EXPECT_EQ(optimizers, (std::set<std::string>{"sgd", "adamw", "nadam"}));
}

}  // namespace
}  // namespace pipesim
