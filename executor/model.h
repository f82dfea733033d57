#pragma once
// The residual-MLP classifier: an input projection, `blocks` residual MLP units and a linear head whose
// logits feed a softmax cross-entropy. Its units are split over the pipeline's (virtual) stages.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "executor/layer_units.h"

namespace pipesim::executor {

struct ModelShape {
  int input_width = 16;
  int width = 16;  // d; the MLP's hidden width is 4d
  int blocks = 4;
  int classes = 4;
  int unit_count() const { return blocks + 2; }
};

template <typename T>
std::vector<std::unique_ptr<LayerUnit<T>>> build_units(const ModelShape& shape) {
  std::vector<std::unique_ptr<LayerUnit<T>>> units;
  units.push_back(std::make_unique<LinearUnit<T>>(shape.input_width, shape.width, ParameterRole::kEmbedding));
  for (int b = 0; b < shape.blocks; ++b)
    units.push_back(std::make_unique<ResidualMlpUnit<T>>(shape.width, 4 * shape.width));
  units.push_back(std::make_unique<LinearUnit<T>>(shape.width, shape.classes, ParameterRole::kHead));
  return units;
}

// The first unit of each stage, plus the end: contiguous runs balanced by parameter count (a proxy for
// FLOPs, which are proportional to it in this model). Throws InputError when there are fewer units than
// stages.
std::vector<int> balanced_unit_split(const std::vector<std::size_t>& unit_parameters, int stages);

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
