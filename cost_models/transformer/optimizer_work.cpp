#include "cost_models/transformer/optimizer_work.h"

#include <algorithm>

#include "cost_models/transformer/device.h"
#include "cost_models/transformer/latent_attention.h"

namespace pipesim::transformer {
namespace {

constexpr double kNewtonSchulzIterations = 5;

}  // namespace

OptimizerBytes optimizer_bytes(OptimizerKind kind, bool matrix_param) {
  // Reads the 16-bit gradient and the fp32 state, writes the state and the 16-bit weights.
  constexpr OptimizerBytes kAdamW{12, 2 + 12 + 12 + 2};
  constexpr OptimizerBytes kSgd{4, 2 + 4 + 4 + 2};
  constexpr OptimizerBytes kMuon{8, 2 + 8 + 8 + 2};
  constexpr OptimizerBytes kLion{8, 2 + 8 + 8 + 2};     // one moment and the master weights
  constexpr OptimizerBytes kAdan{20, 2 + 20 + 20 + 2};  // three moments, the previous gradient, the master
  switch (kind) {
    case OptimizerKind::kAdamW:
    case OptimizerKind::kNAdam:  // the same two moments and master weights as AdamW
    case OptimizerKind::kSoap:   // and its preconditioners per matrix (matrix_optimizer_work)
      return kAdamW;
    case OptimizerKind::kSgd:
      return kSgd;
    case OptimizerKind::kMuon:
      return matrix_param ? kMuon : kAdamW;
    case OptimizerKind::kLion:
      return kLion;
    case OptimizerKind::kAdan:
      return kAdan;
  }
  return kAdamW;
}

MatrixShapes attention_matrices(const TransformerModel& t) {
  if (t.mla.any()) return latent_attention_matrices(t);
  const double h = t.hidden;
  const double qkv = t.query_width() + 2.0 * t.key_value_width(), ad = t.query_width();
  return {{std::min(h, qkv), std::max(h, qkv)}, {std::min(h, ad), std::max(h, ad)}};
}
MatrixShapes mlp_matrices(const TransformerModel& t) {
  const double h = t.hidden, f = t.ffn();
  const std::pair<double, double> matrix{std::min(h, f), std::max(h, f)};
  if (t.mlp == MlpKind::kSwiglu) return {matrix, matrix, matrix};
  return {matrix, matrix};
}

namespace {

// Muon orthogonalizes each r x c update (r <= c) with Newton-Schulz: per iteration X·Xᵀ, A·A and B·X.
double newton_schulz_seconds(const GemmTable& table, const MatrixShapes& matrices) {
  double seconds = 0;
  for (const auto& [rows, cols] : matrices) {
    seconds += gemm_seconds(table, {{rows, rows, cols}, {rows, rows, rows}, {rows, cols, rows}});
  }
  return kNewtonSchulzIterations * seconds;
}

// A symmetric n x n eigendecomposition with its vectors: about 9 n³ flops (tridiagonal reduction, QR
// iterations, back-transformation), charged at the GEMM grid's n x n x n rate (2 n³ flops).
constexpr double kEigendecompositionFlopsPerCube = 9;

// SOAP on r x c matrices: rotating the gradient, the moment and the direction (each Q_Lᵀ X Q_R: an r x c x c
// and an r x c x r GEMM), L and R's products (r x r x c, c x c x r), two eigendecompositions every
// `frequency` steps; fp32 L, R, Q_L, Q_R.
MatrixOptimizerWork soap_work(const GemmTable& table, const MatrixShapes& matrices, int frequency) {
  MatrixOptimizerWork work;
  for (const auto& [rows, cols] : matrices) {
    work.seconds += 3 * gemm_seconds(table, {{rows, cols, cols}, {rows, cols, rows}}) +
                    gemm_seconds(table, {{rows, rows, cols}, {cols, cols, rows}});
    for (const double n : {rows, cols}) {
      work.seconds += kEigendecompositionFlopsPerCube / 2 * gemm_seconds(table, {{n, n, n}}) / frequency;
    }
    work.state_bytes += 2 * 4 * (rows * rows + cols * cols);
  }
  return work;
}

}  // namespace

MatrixOptimizerWork matrix_optimizer_work(const OptimizerSpec& optimizer, const GemmTable& table,
                                          const MatrixShapes& matrices) {
  if (optimizer.type == OptimizerKind::kMuon) return {newton_schulz_seconds(table, matrices), 0};
  if (optimizer.type == OptimizerKind::kSoap)
    return soap_work(table, matrices, std::max(1, optimizer.precondition_frequency));
  return {};
}

MatrixShapes layer_matrices(const TransformerModel& t) {
  MatrixShapes layer = attention_matrices(t);
  for (const auto& m : mlp_matrices(t)) layer.push_back(m);
  return layer;
}

}  // namespace pipesim::transformer
