#pragma once
// What the optimizer costs beyond the layers: its state and the bytes a step moves per parameter, and the
// matrix work of Muon (Newton-Schulz) and SOAP (rotations, eigendecompositions) on the layers' matrices.
#include <utility>
#include <vector>

#include "spec/hardware_profile.h"
#include "spec/optimizer_kind.h"
#include "spec/transformer_model.h"

namespace pipesim::transformer {

// Optimizer state bytes per parameter and bytes one step reads and writes per parameter.
struct OptimizerBytes {
  double state;
  double traffic;
};

OptimizerBytes optimizer_bytes(OptimizerKind kind, bool matrix_param);

// The work of an optimizer that treats each weight matrix as a whole (Muon, SOAP) on one step.
struct MatrixOptimizerWork {
  double seconds = 0;      // one step
  double state_bytes = 0;  // beyond the per-parameter state
};
// Each weight matrix as (rows, columns), rows <= columns.
using MatrixShapes = std::vector<std::pair<double, double>>;
MatrixShapes attention_matrices(const TransformerModel& t);
MatrixShapes mlp_matrices(const TransformerModel& t);
MatrixShapes layer_matrices(const TransformerModel& t);
// Muon's and SOAP's work on `matrices`, on the GEMM grid `table`; nothing for the other optimizers.
MatrixOptimizerWork matrix_optimizer_work(const OptimizerSpec& optimizer, const GemmTable& table,
                                          const MatrixShapes& matrices);

}  // namespace pipesim::transformer
