#include "executor/optim/newton_schulz.h"

#include <cmath>
#include <vector>

namespace pipesim::executor {
namespace {

// C = A B for row-major A (n x k) and B (k x p).
std::vector<double> multiply(const std::vector<double>& a, const std::vector<double>& b, int n, int k,
                             int p) {
  std::vector<double> c(static_cast<std::size_t>(n) * p, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int l = 0; l < k; ++l) {
      const double a_il = a[static_cast<std::size_t>(i) * k + l];
      for (int j = 0; j < p; ++j)
        c[static_cast<std::size_t>(i) * p + j] += a_il * b[static_cast<std::size_t>(l) * p + j];
    }
  }
  return c;
}

}  // namespace

void newton_schulz(std::span<float> matrix, int rows, int cols, int steps) {
  const bool transpose = rows > cols;
  const int n = transpose ? cols : rows;  // X is n x k with n <= k
  const int k = transpose ? rows : cols;
  std::vector<double> x(matrix.size());
  double norm = 0;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const double value = matrix[static_cast<std::size_t>(r) * cols + c];
      x[transpose ? static_cast<std::size_t>(c) * rows + r : static_cast<std::size_t>(r) * cols + c] = value;
      norm += value * value;
    }
  }
  const double scale = 1.0 / (std::sqrt(norm) + 1e-7);
  for (double& value : x) value *= scale;
  std::vector<double> x_t(x.size());
  for (int step = 0; step < steps; ++step) {
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < k; ++j)
        x_t[static_cast<std::size_t>(j) * n + i] = x[static_cast<std::size_t>(i) * k + j];
    }
    const std::vector<double> gram = multiply(x, x_t, n, k, n);
    std::vector<double> poly = multiply(gram, gram, n, n, n);
    for (std::size_t i = 0; i < poly.size(); ++i)
      poly[i] = kNewtonSchulzB * gram[i] + kNewtonSchulzC * poly[i];
    const std::vector<double> px = multiply(poly, x, n, n, k);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = kNewtonSchulzA * x[i] + px[i];
  }
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      matrix[static_cast<std::size_t>(r) * cols + c] = static_cast<float>(
          x[transpose ? static_cast<std::size_t>(c) * rows + r : static_cast<std::size_t>(r) * cols + c]);
    }
  }
}

}  // namespace pipesim::executor
