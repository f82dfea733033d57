#include "executor/optim/newton_schulz.h"

#include <cmath>
#include <vector>

#include "executor/blas.h"

namespace pipesim::executor {

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
  // Each step X <- a X + (b G + c G^2) X with G = X X^T, three fp64 GEMMs through BLAS (as plain loops they
  // made Muon about 3x slower per sample than AdamW on the study's GPT).
  std::vector<double> gram(static_cast<std::size_t>(n) * n);
  std::vector<double> poly(gram.size());
  std::vector<double> next(x.size());
  for (int step = 0; step < steps; ++step) {
    gemm(false, true, n, n, k, 1.0, x.data(), k, x.data(), k, 0.0, gram.data(), n);
    poly = gram;  // b G + c G^2
    gemm(false, false, n, n, n, kNewtonSchulzC, gram.data(), n, gram.data(), n, kNewtonSchulzB, poly.data(),
         n);
    next = x;  // a X + poly X
    gemm(false, false, n, k, n, 1.0, poly.data(), n, x.data(), k, kNewtonSchulzA, next.data(), k);
    x.swap(next);
  }
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      matrix[static_cast<std::size_t>(r) * cols + c] = static_cast<float>(
          x[transpose ? static_cast<std::size_t>(c) * rows + r : static_cast<std::size_t>(r) * cols + c]);
    }
  }
}

}  // namespace pipesim::executor
