#pragma once
// What each parameter tensor of a layer unit is, so that an optimizer can treat matrices and vectors apart
// (Muon orthogonalises hidden matrices only; AdamW decays matrices only).
#include <cstddef>
#include <vector>

namespace pipesim::executor {

enum class ParameterRole {
  kMatrix,     // a hidden weight matrix
  kVector,     // a bias, a LayerNorm gain or shift
  kEmbedding,  // the input projection
  kHead,       // the output layer's matrix
};

// One tensor inside a unit's (or a stage's) flat parameter vector. A matrix is stored row-major as
// rows x cols with y = x W: rows are the layer's inputs (fan-in), cols its outputs (fan-out). A vector has
// rows = 1.
struct ParameterBlock {
  std::size_t offset = 0;
  int rows = 1;
  int cols = 0;
  ParameterRole role = ParameterRole::kVector;
  const char* name = "values";  // within its unit, for dumps: "weight", "ln.gamma", "w_in" ...
  std::size_t size() const { return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols); }
  bool is_matrix() const { return role != ParameterRole::kVector; }
};

// The blocks of a run of units, each unit's blocks shifted by the unit's offset in the run.
inline void append_blocks(std::vector<ParameterBlock>& all, const std::vector<ParameterBlock>& unit_blocks,
                          std::size_t unit_offset) {
  for (ParameterBlock b : unit_blocks) {
    b.offset += unit_offset;
    all.push_back(b);
  }
}

}  // namespace pipesim::executor
