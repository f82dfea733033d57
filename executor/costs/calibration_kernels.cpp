#include "executor/costs/calibration_kernels.h"

#include <fmt/format.h>

#include <memory>

#include "executor/blas.h"
#include "executor/dense_ops.h"
#include "executor/optim/stage_updater.h"
#include "executor/teacher_data.h"

namespace pipesim {
namespace {

using executor::Matrix;
using Body = std::function<void()>;

// Rows of `cols` values, filled deterministically in [-1, 1).
Matrix<float> filled(long elements, int cols, int salt) {
  Matrix<float> m(static_cast<int>(std::max<long>(1, elements / cols)), cols);
  for (std::size_t i = 0; i < m.values.size(); ++i)
    m.values[i] = static_cast<float>((i * 7919 + salt * 104729) % 2000) / 1000.0F - 1.0F;
  return m;
}

constexpr int kWidth = 256;  // columns of the element-wise kernels' matrices

CpuElementwiseKernel kernel(const char* name, std::function<Body(long)> prepare, long elements = 0) {
  return {name, std::move(prepare), elements};
}

// A stage's gradient buffer holds its parameters: millions of values, written where no cache holds them.
constexpr long kGradientBufferElements = 1L << 22;

std::vector<CpuElementwiseKernel> elementwise_kernels() {
  namespace k = executor_kernels;
  std::vector<CpuElementwiseKernel> out;
  out.push_back(kernel(k::kLayerNormForward, [](long n) -> Body {
    auto x = std::make_shared<Matrix<float>>(filled(n, kWidth, 1));
    auto gamma_beta = std::make_shared<std::vector<float>>(2 * kWidth, 1.0F);
    return [x, gamma_beta] {
      Matrix<float> x_hat;
      std::vector<float> rstd;
      executor::layer_norm_affine_forward(*x, gamma_beta->data(), x_hat, rstd);
    };
  }));
  out.push_back(kernel(k::kLayerNormInputGrad, [](long n) -> Body {
    auto d = std::make_shared<Matrix<float>>(filled(n, kWidth, 2));
    auto x_hat = std::make_shared<Matrix<float>>(filled(n, kWidth, 3));
    auto rstd = std::make_shared<std::vector<float>>(x_hat->rows, 1.0F);
    auto gamma = std::make_shared<std::vector<float>>(kWidth, 1.0F);
    return [=] { executor::layer_norm_affine_input_grad(*d, gamma->data(), *x_hat, *rstd); };
  }));
  out.push_back(kernel(k::kLayerNormWeightGrad, [](long n) -> Body {
    auto d = std::make_shared<Matrix<float>>(filled(n, kWidth, 4));
    auto x_hat = std::make_shared<Matrix<float>>(filled(n, kWidth, 5));
    auto grads = std::make_shared<std::vector<float>>(2 * kWidth, 0.0F);
    return [=] { executor::layer_norm_affine_weight_grad(*d, *x_hat, grads->data()); };
  }));
  out.push_back(kernel(k::kGeluForward, [](long n) -> Body {
    auto z = std::make_shared<Matrix<float>>(filled(n, kWidth, 6));
    return [z] { executor::gelu_forward(*z); };
  }));
  out.push_back(kernel(k::kGeluInputGrad, [](long n) -> Body {
    auto dg = std::make_shared<Matrix<float>>(filled(n, kWidth, 7));
    auto z = std::make_shared<Matrix<float>>(filled(n, kWidth, 8));
    return [=] { executor::gelu_input_grad(*dg, *z); };
  }));
  out.push_back(kernel(k::kBiasFill, [](long n) -> Body {
    auto bias = std::make_shared<std::vector<float>>(kWidth, 0.5F);
    const int rows = static_cast<int>(std::max<long>(1, n / kWidth));
    // affine_forward's first half: a new output, each row the bias (the GEMM then accumulates into it).
    return [bias, rows] {
      Matrix<float> y(rows, kWidth);
      for (int r = 0; r < rows; ++r) {
        for (int c = 0; c < kWidth; ++c) y.at(r, c) = (*bias)[c];
      }
      volatile float sink = y.values.back();
      (void)sink;
    };
  }));
  out.push_back(kernel(k::kBiasGrad, [](long n) -> Body {
    auto dy = std::make_shared<Matrix<float>>(filled(n, kWidth, 9));
    auto grad = std::make_shared<std::vector<float>>(kWidth, 0.0F);
    return [=] {
      for (int r = 0; r < dy->rows; ++r) {
        for (int c = 0; c < dy->cols; ++c) (*grad)[c] += dy->at(r, c);
      }
    };
  }));
  out.push_back(kernel(k::kAdd, [](long n) -> Body {
    auto y = std::make_shared<Matrix<float>>(filled(n, kWidth, 10));
    auto x = std::make_shared<Matrix<float>>(filled(n, kWidth, 11));
    return [=] {
      for (std::size_t i = 0; i < y->values.size(); ++i) y->values[i] += x->values[i];
    };
  }));
  out.push_back(kernel(k::kCopy, [](long n) -> Body {
    auto x = std::make_shared<Matrix<float>>(filled(n, kWidth, 12));
    return [x] {
      const Matrix<float> copy = *x;
      volatile float sink = copy.values.back();
      (void)sink;
    };
  }));
  out.push_back(kernel(
      k::kZeroFill,
      [](long n) -> Body {
        return [n] {
          std::vector<float> grads;
          grads.assign(static_cast<std::size_t>(n), 0.0F);
          volatile float sink = grads.back();
          (void)sink;
        };
      },
      kGradientBufferElements));
  out.push_back(kernel(k::kSoftmaxCrossEntropy, [](long n) -> Body {
    constexpr int kClasses = 8;
    auto logits = std::make_shared<Matrix<float>>(filled(n, kClasses, 13));
    auto labels = std::make_shared<std::vector<int>>(logits->rows, 1);
    return [=] {
      Matrix<float> grad;
      executor::softmax_cross_entropy(*logits, *labels, grad);
    };
  }));
  out.push_back(kernel(k::kTeacherData, [](long n) -> Body {
    constexpr int kInput = 16, kClasses = 4;
    const int samples = static_cast<int>(std::max<long>(1, n / (kInput * (kClasses + 1))));
    return [samples] { executor::teacher_microbatch<float>(1, 0, 0, samples, kInput, kClasses); };
  }));
  return out;
}

CpuUpdateKernel update_kernel(OptimizerKind kind) {
  return {optimizer_name(kind), [kind](long parameters, int gradients, CpuOperands* operands) -> Body {
            executor::UpdateRule rule;
            rule.optimizer.kind = kind;
            const std::vector<executor::ParameterBlock> blocks = {{.offset = 0,
                                                                   .rows = 1,
                                                                   .cols = static_cast<int>(parameters),
                                                                   .role = executor::ParameterRole::kVector}};
            auto updater = std::make_shared<executor::StageUpdater>(rule, blocks, parameters);
            auto weights = std::make_shared<std::vector<float>>(filled(parameters, 1, 14).values);
            auto grads = std::make_shared<std::vector<std::vector<float>>>();
            for (int g = 0; g < gradients; ++g) grads->push_back(filled(parameters, 1, 15 + g).values);
            // The weights were written by the previous U, the gradients by the backwards since: from memory.
            if (operands) {
              operands->push_back({weights->data(), weights->size() * sizeof(float)});
              for (const auto& g : *grads) operands->push_back({g.data(), g.size() * sizeof(float)});
            }
            // The executor's U (WorkerNumerics::step_optimizer): a new version copied from the newest, then
            // the step with the mean of the gradients.
            return [=] {
              std::vector<const std::vector<float>*> in_order;
              for (const auto& g : *grads) in_order.push_back(&g);
              auto next = std::make_shared<std::vector<float>>(*weights);
              updater->update(*next, in_order);
            };
          }};
}

}  // namespace

void use_executor_kernels(CpuCalibrationOptions& options) {
  executor::use_single_blas_thread();
  // The layouts and accumulation of the executor's affine maps (executor/dense_ops.h): the forward
  // accumulates onto the bias (nn, beta 1), the input gradient overwrites (nt), the weight gradient
  // accumulates into the microbatch's buffer (tn, beta 1).
  options.gemm = [](const std::string& layout, const float* a, const float* b, float* c, long m, long n,
                    long k) {
    const int mi = static_cast<int>(m), ni = static_cast<int>(n), ki = static_cast<int>(k);
    if (layout == "nt") {
      executor::gemm(false, true, mi, ni, ki, 1.0F, a, ki, b, ki, 0.0F, c, ni);
    } else if (layout == "tn") {
      executor::gemm(true, false, mi, ni, ki, 1.0F, a, mi, b, ni, 1.0F, c, ni);
    } else {
      executor::gemm(false, false, mi, ni, ki, 1.0F, a, ki, b, ni, 1.0F, c, ni);
    }
  };
  options.gemm_layouts = {"nn", "nt", "tn"};
  options.gemm_name =
      fmt::format("OpenBLAS sgemm as the executor calls it (kernels: {})", executor::blas_core_name());
  options.elementwise = elementwise_kernels();
  options.updates.clear();
  for (const OptimizerKind kind : {OptimizerKind::kSgd, OptimizerKind::kAdamW, OptimizerKind::kNAdam})
    options.updates.push_back(update_kernel(kind));
}

}  // namespace pipesim
