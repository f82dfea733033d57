#pragma once
// The building blocks of the layer units, templated on the scalar so that gradient checks run the very same
// code in double precision: affine maps on BLAS, LayerNorm, GELU and the softmax cross-entropy loss.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <type_traits>
#include <vector>

#include "executor/blas.h"
#include "executor/tensor.h"

namespace pipesim::executor {

// y = x W + b, with W stored in x rows (in x out, row-major) followed by b.
template <typename T>
Matrix<T> affine_forward(const Matrix<T>& x, const T* weights, const T* bias, int out) {
  Matrix<T> y(x.rows, out);
  for (int r = 0; r < x.rows; ++r) {
    for (int c = 0; c < out; ++c) y.at(r, c) = bias[c];
  }
  gemm(false, false, x.rows, out, x.cols, T(1), x.data(), x.cols, weights, out, T(1), y.data(), out);
  return y;
}

// dx = dy W^T.
template <typename T>
Matrix<T> affine_input_grad(const Matrix<T>& dy, const T* weights, int in) {
  Matrix<T> dx(dy.rows, in);
  gemm(false, true, dy.rows, in, dy.cols, T(1), dy.data(), dy.cols, weights, dy.cols, T(0), dx.data(), in);
  return dx;
}

// dW += x^T dy and db += the column sums of dy (rows in order, so the sum is reproducible).
template <typename T>
void affine_weight_grad(const Matrix<T>& x, const Matrix<T>& dy, T* weight_grad, T* bias_grad) {
  gemm(true, false, x.cols, dy.cols, x.rows, T(1), x.data(), x.cols, dy.data(), dy.cols, T(1), weight_grad,
       dy.cols);
  for (int r = 0; r < dy.rows; ++r) {
    for (int c = 0; c < dy.cols; ++c) bias_grad[c] += dy.at(r, c);
  }
}

inline constexpr double kLayerNormEpsilon = 1e-5;

// Per row: x_hat = (x - mean) / sqrt(var + eps). Returns x_hat and fills the reciprocal deviations.
template <typename T>
Matrix<T> layer_norm_normalize(const Matrix<T>& x, std::vector<T>& reciprocal_std) {
  Matrix<T> x_hat(x.rows, x.cols);
  reciprocal_std.assign(x.rows, T(0));
  for (int r = 0; r < x.rows; ++r) {
    T mean = 0;
    for (int c = 0; c < x.cols; ++c) mean += x.at(r, c);
    mean /= static_cast<T>(x.cols);
    T variance = 0;
    for (int c = 0; c < x.cols; ++c) variance += (x.at(r, c) - mean) * (x.at(r, c) - mean);
    variance /= static_cast<T>(x.cols);
    const T rstd = T(1) / std::sqrt(variance + static_cast<T>(kLayerNormEpsilon));
    reciprocal_std[r] = rstd;
    for (int c = 0; c < x.cols; ++c) x_hat.at(r, c) = (x.at(r, c) - mean) * rstd;
  }
  return x_hat;
}

// dx from d(x_hat): rstd * (g - mean(g) - x_hat * mean(g * x_hat)) per row.
template <typename T>
Matrix<T> layer_norm_input_grad(const Matrix<T>& x_hat_grad, const Matrix<T>& x_hat,
                                const std::vector<T>& reciprocal_std) {
  Matrix<T> dx(x_hat.rows, x_hat.cols);
  const T n = static_cast<T>(x_hat.cols);
  for (int r = 0; r < x_hat.rows; ++r) {
    T mean_grad = 0;
    T mean_grad_x_hat = 0;
    for (int c = 0; c < x_hat.cols; ++c) {
      mean_grad += x_hat_grad.at(r, c);
      mean_grad_x_hat += x_hat_grad.at(r, c) * x_hat.at(r, c);
    }
    mean_grad /= n;
    mean_grad_x_hat /= n;
    for (int c = 0; c < x_hat.cols; ++c) {
      dx.at(r, c) = reciprocal_std[r] * (x_hat_grad.at(r, c) - mean_grad - x_hat.at(r, c) * mean_grad_x_hat);
    }
  }
  return dx;
}

// normed = gamma * x_hat + beta per row, params holding gamma[d] then beta[d]; fills x_hat and 1/sigma.
template <typename T>
Matrix<T> layer_norm_affine_forward(const Matrix<T>& x, const T* gamma_beta, Matrix<T>& x_hat,
                                    std::vector<T>& reciprocal_std) {
  x_hat = layer_norm_normalize(x, reciprocal_std);
  Matrix<T> normed(x.rows, x.cols);
  for (int r = 0; r < x.rows; ++r) {
    for (int c = 0; c < x.cols; ++c)
      normed.at(r, c) = gamma_beta[c] * x_hat.at(r, c) + gamma_beta[x.cols + c];
  }
  return normed;
}

// dx from d(normed): d(x_hat) = gamma * d(normed), then the normalisation's backward.
template <typename T>
Matrix<T> layer_norm_affine_input_grad(const Matrix<T>& d_normed, const T* gamma, const Matrix<T>& x_hat,
                                       const std::vector<T>& reciprocal_std) {
  Matrix<T> d_x_hat(d_normed.rows, d_normed.cols);
  for (int r = 0; r < d_normed.rows; ++r) {
    for (int c = 0; c < d_normed.cols; ++c) d_x_hat.at(r, c) = gamma[c] * d_normed.at(r, c);
  }
  return layer_norm_input_grad(d_x_hat, x_hat, reciprocal_std);
}

// d(gamma) += sum over rows of d(normed) * x_hat, d(beta) += sum of d(normed); rows in order.
template <typename T>
void layer_norm_affine_weight_grad(const Matrix<T>& d_normed, const Matrix<T>& x_hat, T* gamma_beta_grad) {
  for (int r = 0; r < d_normed.rows; ++r) {
    for (int c = 0; c < d_normed.cols; ++c) {
      gamma_beta_grad[c] += d_normed.at(r, c) * x_hat.at(r, c);
      gamma_beta_grad[d_normed.cols + c] += d_normed.at(r, c);
    }
  }
}

// GELU in its tanh form, 0.5 x (1 + tanh(u)) with u = sqrt(2/pi) (x + 0.044715 x^3).
inline constexpr double kGeluScale = 0.7978845608028654;  // sqrt(2/pi)
inline constexpr double kGeluCubic = 0.044715;

// tanh in fp32 as a clamped odd rational function (degree 13 over degree 6, the minimax fit Eigen uses for
// its float tanh): only multiplies, adds, one divide and min/max, so a plain loop over it vectorises (no
// call per element, no errno). Outside +-7.9 it is +-1 to fp32 precision.
inline float rational_tanh(float x) {
  constexpr float kClamp = 7.90531110763549805F;
  // Clamped as (|x + c| - |x - c|) / 2 rather than with min/max: comparisons may trap, so without
  // -fno-trapping-math a compiler keeps them as branches and will not vectorise; fabs is a bit mask. Inside
  // the range the result is x up to one rounding of x +- c (about 5e-7 absolute).
  x = 0.5F * (std::fabs(x + kClamp) - std::fabs(x - kClamp));
  const float x2 = x * x;
  float p = -2.76076847742355e-16F;
  p = p * x2 + 2.00018790482477e-13F;
  p = p * x2 - 8.60467152213735e-11F;
  p = p * x2 + 5.12229709037114e-08F;
  p = p * x2 + 1.48572235717979e-05F;
  p = p * x2 + 6.37261928875436e-04F;
  p = p * x2 + 4.89352455891786e-03F;
  p = p * x;
  float q = 1.19825839466702e-06F;
  q = q * x2 + 1.18534705686654e-04F;
  q = q * x2 + 2.26843463243900e-03F;
  q = q * x2 + 4.89352518554385e-03F;
  return p / q;
}

// fp32 (training) takes the rational tanh; fp64 (gradient checks) the exact 1 - 2 / (exp(2u) + 1), so that
// finite differences see the true function whose derivative the backward uses.
template <typename T>
T gelu_tanh_of(T x) {
  const T u = static_cast<T>(kGeluScale) * (x + static_cast<T>(kGeluCubic) * x * x * x);
  if constexpr (std::is_same_v<T, float>) {
    return rational_tanh(u);
  } else {
    return T(1) - T(2) / (std::exp(T(2) * u) + T(1));
  }
}

template <typename T>
Matrix<T> gelu_forward(const Matrix<T>& z) {
  Matrix<T> g(z.rows, z.cols);
  const std::size_t n = z.values.size();
  const T* in = z.data();
  T* out = g.data();
  for (std::size_t i = 0; i < n; ++i) out[i] = T(0.5) * in[i] * (T(1) + gelu_tanh_of(in[i]));
  return g;
}

// dz = dg * GELU'(z), GELU'(x) = 0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2).
template <typename T>
Matrix<T> gelu_input_grad(const Matrix<T>& dg, const Matrix<T>& z) {
  Matrix<T> dz(z.rows, z.cols);
  const std::size_t n = z.values.size();
  const T* in = z.data();
  const T* upstream = dg.data();
  T* out = dz.data();
  for (std::size_t i = 0; i < n; ++i) {
    const T x = in[i];
    const T t = gelu_tanh_of(x);
    const T du = static_cast<T>(kGeluScale) * (T(1) + T(3 * kGeluCubic) * x * x);
    out[i] = upstream[i] * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du);
  }
  return dz;
}

// Mean softmax cross-entropy over the rows; fills d(loss)/d(logits) = (softmax - one_hot) / rows.
template <typename T>
T softmax_cross_entropy(const Matrix<T>& logits, const std::vector<int>& labels, Matrix<T>& logits_grad) {
  logits_grad = Matrix<T>(logits.rows, logits.cols);
  T loss = 0;
  const T inv_rows = T(1) / static_cast<T>(logits.rows);
  for (int r = 0; r < logits.rows; ++r) {
    T max_logit = logits.at(r, 0);
    for (int c = 1; c < logits.cols; ++c) max_logit = std::max(max_logit, logits.at(r, c));
    T sum = 0;
    for (int c = 0; c < logits.cols; ++c) sum += std::exp(logits.at(r, c) - max_logit);
    const T log_sum = std::log(sum) + max_logit;
    loss += log_sum - logits.at(r, labels[r]);
    for (int c = 0; c < logits.cols; ++c) {
      const T p = std::exp(logits.at(r, c) - log_sum);
      logits_grad.at(r, c) = (p - (c == labels[r] ? T(1) : T(0))) * inv_rows;
    }
  }
  return loss * inv_rows;
}

}  // namespace pipesim::executor
