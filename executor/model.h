#pragma once
// The models, as sequences of layer units split over the pipeline's (virtual) stages:
// - the residual-MLP classifier: an input (a linear projection of dense features, or a character embedding
//   of a context window, concatenated, then a projection), `blocks` residual MLP units and a linear head;
// - the tiny GPT: token and position embeddings, `blocks` pre-LN blocks each as two units (causal
//   self-attention, then the residual MLP), the final LayerNorm with an untied head.
// The logits feed a softmax cross-entropy (one row per sample, or per token for the GPT).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "executor/layer_units.h"
#include "executor/transformer_units.h"

namespace pipesim::executor {

enum class ModelKind : std::uint8_t { kResidualMlp, kGpt };

struct ModelShape {
  int input_width = 16;  // dense features, or (token input) characters of context
  int width = 16;        // d; the MLP's hidden width is 4d
  int blocks = 4;
  int classes = 4;  // classes, or the character vocabulary
  ModelKind kind = ModelKind::kResidualMlp;
  bool token_input = false;  // inputs are character ids < classes (always for the GPT)
  int embedding_width = 8;   // residual MLP with token input: per-character embedding width
  int heads = 2;             // GPT: attention heads (width must be a multiple)
  int input_units() const { return kind == ModelKind::kResidualMlp && token_input ? 2 : 1; }
  int units_per_block() const { return kind == ModelKind::kGpt ? 2 : 1; }
  int unit_count() const { return input_units() + units_per_block() * blocks + 1; }
};

// The fewest blocks (at least `shape.blocks`) that give every one of `stages` stages a unit.
int blocks_for_stages(const ModelShape& shape, int stages);

template <typename T>
std::vector<std::unique_ptr<LayerUnit<T>>> build_units(const ModelShape& shape) {
  std::vector<std::unique_ptr<LayerUnit<T>>> units;
  const int d = shape.width;
  if (shape.kind == ModelKind::kGpt) {
    units.push_back(
        std::make_unique<EmbeddingUnit<T>>(shape.classes, d, shape.input_width, EmbeddingLayout::kTokenRows));
    for (int b = 0; b < shape.blocks; ++b) {
      units.push_back(std::make_unique<CausalSelfAttentionUnit<T>>(d, shape.heads, shape.input_width));
      units.push_back(std::make_unique<ResidualMlpUnit<T>>(d, 4 * d));
    }
    units.push_back(std::make_unique<NormHeadUnit<T>>(d, shape.classes));
    return units;
  }
  if (shape.token_input) {
    units.push_back(std::make_unique<EmbeddingUnit<T>>(shape.classes, shape.embedding_width,
                                                       shape.input_width, EmbeddingLayout::kConcatenated));
    units.push_back(std::make_unique<LinearUnit<T>>(shape.embedding_width * shape.input_width, d));
  } else {
    units.push_back(std::make_unique<LinearUnit<T>>(shape.input_width, d, ParameterRole::kEmbedding));
  }
  for (int b = 0; b < shape.blocks; ++b) units.push_back(std::make_unique<ResidualMlpUnit<T>>(d, 4 * d));
  units.push_back(std::make_unique<LinearUnit<T>>(d, shape.classes, ParameterRole::kHead));
  return units;
}

// Each unit's forward FLOPs for a microbatch of `samples` samples (rows carried from unit to unit).
template <typename T>
std::vector<double> unit_costs(const std::vector<std::unique_ptr<LayerUnit<T>>>& units, int samples) {
  std::vector<double> costs;
  int rows = samples;
  for (const auto& unit : units) {
    costs.push_back(unit->forward_flops(rows));
    rows = unit->output_rows(rows);
  }
  return costs;
}

// The first unit of each stage, plus the end: the simulator's min-max contiguous partition
// (`layer_split: balanced`, cost_models/balanced_split.h) over the units' costs. Throws InputError when
// there are fewer units than stages.
std::vector<int> balanced_unit_split(const std::vector<double>& unit_costs, int stages);

// A contiguous run of units: one stage's share of the model, with its parameters in one flat vector.
template <typename T>
class StageModel {
 public:
  StageModel(const std::vector<std::unique_ptr<LayerUnit<T>>>& units, int first, int end) {
    std::size_t offset = 0;
    for (int u = first; u < end; ++u) {
      units_.push_back(units[u].get());
      offsets_.push_back(offset);
      offset += units[u]->parameter_count();
    }
    parameter_count_ = offset;
    first_unit_ = first;
  }
  std::size_t parameter_count() const { return parameter_count_; }
  int first_unit() const { return first_unit_; }
  int unit_count() const { return static_cast<int>(units_.size()); }
  // Where the stage's u-th unit starts in its flat parameters.
  std::size_t unit_offset(int u) const { return offsets_[u]; }
  std::vector<ParameterBlock> parameter_blocks() const {
    std::vector<ParameterBlock> blocks;
    for (std::size_t u = 0; u < units_.size(); ++u)
      append_blocks(blocks, units_[u]->parameter_blocks(), offsets_[u]);
    return blocks;
  }
  void initialize(std::span<T> params, std::uint64_t seed) const {
    for (std::size_t u = 0; u < units_.size(); ++u) {
      units_[u]->initialize(slice(params, u), seed, static_cast<std::uint64_t>(first_unit_) + u);
    }
  }
  // One microbatch through the stage; caches holds one entry per unit afterwards.
  Matrix<T> forward(std::span<const T> params, Matrix<T> x, std::vector<UnitCache<T>>& caches) const {
    caches.assign(units_.size(), {});
    for (std::size_t u = 0; u < units_.size(); ++u) x = units_[u]->forward(slice(params, u), x, caches[u]);
    return x;
  }
  Matrix<T> backward_input(std::span<const T> params, Matrix<T> dy, std::vector<UnitCache<T>>& caches) const {
    for (std::size_t u = units_.size(); u-- > 0;)
      dy = units_[u]->backward_input(slice(params, u), dy, caches[u]);
    return dy;
  }
  void backward_weight(const std::vector<UnitCache<T>>& caches, std::span<T> grads) const {
    for (std::size_t u = units_.size(); u-- > 0;) units_[u]->backward_weight(caches[u], slice(grads, u));
  }

 private:
  template <typename S>
  std::span<S> slice(std::span<S> all, std::size_t u) const {
    return all.subspan(offsets_[u], units_[u]->parameter_count());
  }
  std::vector<const LayerUnit<T>*> units_;
  std::vector<std::size_t> offsets_;
  std::size_t parameter_count_ = 0;
  int first_unit_ = 0;
};

inline std::size_t cache_bytes(const auto& caches) {
  std::size_t total = 0;
  for (const auto& c : caches) total += c.bytes();
  return total;
}

}  // namespace pipesim::executor
