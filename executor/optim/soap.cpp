// SOAP (Vyas et al. 2024, "Improving and Stabilizing Shampoo using Adam"): Adam run in the eigenbasis of
// Shampoo's preconditioners. Per r x c matrix: L = E[G Gᵀ] and R = E[Gᵀ G] (decay shampoo_beta), Q_L and
// Q_R their eigenvectors by descending eigenvalue, refreshed every precondition_frequency steps; the first
// moment M in the weights' own basis, the second V in the rotated one:
//   G' = Q_Lᵀ G Q_R,  M = b1 M + (1 - b1) G,  V = b2 V + (1 - b2) G'²,
//   u  = Q_L [ (Q_Lᵀ M Q_R / c1) / (sqrt(V / c2) + eps) ] Q_Rᵀ,   c_i = 1 - b_i^k.
// As the authors' code: the first step only builds L, R and the bases (no update, so that a step's own
// gradient never rotates itself); then k counts the updates from 1; L and R take each step's gradient after
// its update. Vectors get the same Adam without rotation (the authors' precondition_1d off). Differences
// from their code: the bases are refreshed by a full eigendecomposition (theirs: one power iteration and QR
// from the previous basis, reordering V's rows and columns to follow), and epsilon is applied to the
// bias-corrected V as in pipesim's AdamW. Decoupled weight decay on matrices, from the first update.
#include <algorithm>
#include <cmath>
#include <vector>

#include "executor/blas.h"
#include "executor/optim/optimizer.h"

namespace pipesim::executor {
namespace {

struct MatrixState {
  std::vector<float> left, right;              // L (r x r), R (c x c)
  std::vector<float> left_basis, right_basis;  // Q_L, Q_R: eigenvectors as columns
};

// The eigenvectors of the symmetric n x n `matrix` as the columns of a row-major n x n matrix.
std::vector<float> eigenbasis(const std::vector<float>& matrix, int n) {
  std::vector<double> a(matrix.begin(), matrix.end());
  std::vector<double> values(static_cast<std::size_t>(n));
  symmetric_eigenvectors(n, a.data(), values.data());
  return {a.begin(), a.end()};
}

class Soap final : public Optimizer {
 public:
  Soap(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks, std::size_t parameters)
      : config_(config),
        blocks_(blocks),
        m_(parameters, 0.0F),
        v_(parameters, 0.0F),
        matrices_(blocks.size()) {
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      const ParameterBlock& b = blocks_[i];
      if (!b.is_matrix()) continue;
      MatrixState& s = matrices_[i];
      s.left.assign(square(b.rows), 0.0F);
      s.right.assign(square(b.cols), 0.0F);
      s.left_basis.assign(square(b.rows), 0.0F);  // set by the first step
      s.right_basis.assign(square(b.cols), 0.0F);
    }
  }

  void direction(std::span<const float> weights, std::span<const float> gradient, int step,
                 std::span<float> u) override {
    if (step == 1) {
      for (std::size_t i = 0; i < blocks_.size(); ++i) {
        if (blocks_[i].is_matrix()) accumulate_preconditioners(i, gradient, true);
      }
      std::fill(u.begin(), u.end(), 0.0F);
      return;
    }
    const int k = step - 1;
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      const ParameterBlock& b = blocks_[i];
      if (b.is_matrix()) {
        rotated_adam(i, gradient, k, u);
        accumulate_preconditioners(i, gradient, k % std::max(1, config_.precondition_frequency) == 0);
      } else {
        adam(gradient.subspan(b.offset, b.size()), b.offset, k, u.subspan(b.offset, b.size()));
      }
    }
    add_weight_decay(config_.weight_decay, blocks_, weights, u);
  }

  Bytes state_bytes() const override {
    std::size_t values = m_.size() + v_.size();
    for (const MatrixState& s : matrices_) {
      values += s.left.size() + s.right.size() + s.left_basis.size() + s.right_basis.size();
    }
    return static_cast<Bytes>(values * sizeof(float));
  }

 private:
  static std::size_t square(int n) { return static_cast<std::size_t>(n) * static_cast<std::size_t>(n); }

  // A vector's Adam: M and V at [offset, offset + size) from g, (M / c1) / (sqrt(V / c2) + eps) into `out`.
  void adam(std::span<const float> g, std::size_t offset, int k, std::span<float> out) {
    const float b1 = config_.beta1, b2 = config_.beta2;
    const double c1 = 1.0 - std::pow(static_cast<double>(b1), k);
    const double c2 = 1.0 - std::pow(static_cast<double>(b2), k);
    for (std::size_t j = 0; j < g.size(); ++j) {
      float& m = m_[offset + j];
      float& v = v_[offset + j];
      m = b1 * m + (1.0F - b1) * g[j];
      v = b2 * v + (1.0F - b2) * g[j] * g[j];
      out[j] = static_cast<float>((m / c1) / (std::sqrt(v / c2) + config_.epsilon));
    }
  }

  // Q_Lᵀ X Q_R (forward) or Q_L X Q_Rᵀ (back), r x c.
  void rotate(const MatrixState& s, int r, int c, const float* x, float* out, bool back) {
    scratch_.resize(static_cast<std::size_t>(r) * c);
    gemm(false, back, r, c, c, 1.0F, x, c, s.right_basis.data(), c, 0.0F, scratch_.data(), c);
    gemm(!back, false, r, c, r, 1.0F, s.left_basis.data(), r, scratch_.data(), c, 0.0F, out, c);
  }

  void rotated_adam(std::size_t i, std::span<const float> gradient, int k, std::span<float> u) {
    const ParameterBlock& b = blocks_[i];
    const MatrixState& s = matrices_[i];
    const float* g = gradient.data() + b.offset;
    rotated_gradient_.resize(b.size());
    rotate(s, b.rows, b.cols, g, rotated_gradient_.data(), false);
    // M first (in the weights' basis), then its rotation, then V and the preconditioned direction.
    const float b1 = config_.beta1;
    for (std::size_t j = 0; j < b.size(); ++j) m_[b.offset + j] = b1 * m_[b.offset + j] + (1.0F - b1) * g[j];
    rotated_moment_.resize(b.size());
    rotate(s, b.rows, b.cols, m_.data() + b.offset, rotated_moment_.data(), false);
    const float b2 = config_.beta2;
    const double c1 = 1.0 - std::pow(static_cast<double>(b1), k);
    const double c2 = 1.0 - std::pow(static_cast<double>(b2), k);
    for (std::size_t j = 0; j < b.size(); ++j) {
      float& v = v_[b.offset + j];
      v = b2 * v + (1.0F - b2) * rotated_gradient_[j] * rotated_gradient_[j];
      rotated_gradient_[j] =
          static_cast<float>((rotated_moment_[j] / c1) / (std::sqrt(v / c2) + config_.epsilon));
    }
    rotate(s, b.rows, b.cols, rotated_gradient_.data(), u.data() + b.offset, true);
  }

  void accumulate_preconditioners(std::size_t i, std::span<const float> gradient, bool refresh_bases) {
    const ParameterBlock& b = blocks_[i];
    MatrixState& s = matrices_[i];
    const float* g = gradient.data() + b.offset;
    const float beta = config_.shampoo_beta;
    gemm(false, true, b.rows, b.rows, b.cols, 1.0F - beta, g, b.cols, g, b.cols, beta, s.left.data(), b.rows);
    gemm(true, false, b.cols, b.cols, b.rows, 1.0F - beta, g, b.cols, g, b.cols, beta, s.right.data(),
         b.cols);
    if (!refresh_bases) return;
    s.left_basis = eigenbasis(s.left, b.rows);
    s.right_basis = eigenbasis(s.right, b.cols);
  }

  OptimizerConfig config_;
  std::vector<ParameterBlock> blocks_;
  std::vector<float> m_, v_;
  std::vector<MatrixState> matrices_;  // per block; empty for vectors
  std::vector<float> scratch_, rotated_gradient_, rotated_moment_;
};

}  // namespace

std::unique_ptr<Optimizer> make_soap(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks,
                                     std::size_t parameters) {
  return std::make_unique<Soap>(config, blocks, parameters);
}

}  // namespace pipesim::executor
