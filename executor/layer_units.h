#pragma once
// Layer units: the pieces a model is made of and the partitioner splits over stages. Each unit has a
// forward, a backward for its input (I) and a backward for its weights (W); a full B is I then W. A unit's
// parameters live in a flat span owned by its stage, so weight versions and stashes are plain copies.
#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "executor/counter_rng.h"
#include "executor/dense_ops.h"
#include "executor/optim/parameter_blocks.h"

namespace pipesim::executor {

// What a unit keeps for one microbatch: F's saved tensors for I, then I's saved tensors for W.
template <typename T>
struct UnitCache {
  std::vector<Matrix<T>> saved;
  std::vector<T> reciprocal_std;  // LayerNorm's per-row 1/sigma
  std::size_t bytes() const {
    std::size_t total = reciprocal_std.size() * sizeof(T);
    for (const Matrix<T>& m : saved) total += m.bytes();
    return total;
  }
};

template <typename T>
class LayerUnit {
 public:
  virtual ~LayerUnit() = default;
  virtual int input_width() const = 0;
  virtual int output_width() const = 0;
  virtual std::size_t parameter_count() const = 0;
  // Deterministic initial values from (seed, unit index).
  virtual void initialize(std::span<T> params, std::uint64_t seed, std::uint64_t unit_index) const = 0;
  virtual Matrix<T> forward(std::span<const T> params, const Matrix<T>& x, UnitCache<T>& cache) const = 0;
  // dL/dx from dL/dy; the cache then holds what backward_weight needs.
  virtual Matrix<T> backward_input(std::span<const T> params, const Matrix<T>& dy,
                                   UnitCache<T>& cache) const = 0;
  // Adds dL/d(params) to grads. Reads no weights, only what backward_input left.
  virtual void backward_weight(const UnitCache<T>& cache, std::span<T> grads) const = 0;
  // The unit's tensors in its flat parameters (for the optimizers). A unit that does not say is treated as
  // one vector: AdamW everywhere, no weight decay.
  virtual std::vector<ParameterBlock> parameter_blocks() const {
    return {{.offset = 0,
             .rows = 1,
             .cols = static_cast<int>(parameter_count()),
             .role = ParameterRole::kVector}};
  }
};

// Uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) weights.
template <typename T>
void initialize_uniform(std::span<T> values, double bound, std::uint64_t seed, std::uint64_t unit_index,
                        std::uint64_t part) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<T>(bound * symmetric_uniform({seed, unit_index, part, i}));
  }
}

// y = x W + b.
template <typename T>
class LinearUnit final : public LayerUnit<T> {
 public:
  // role: what the weight matrix is to the optimizers (the input projection, a hidden matrix, the head).
  LinearUnit(int in, int out, ParameterRole role = ParameterRole::kMatrix)
      : in_(in), out_(out), role_(role) {}
  int input_width() const override { return in_; }
  int output_width() const override { return out_; }
  std::size_t parameter_count() const override { return static_cast<std::size_t>(in_) * out_ + out_; }
  void initialize(std::span<T> params, std::uint64_t seed, std::uint64_t unit_index) const override {
    initialize_uniform(params, 1.0 / std::sqrt(static_cast<double>(in_)), seed, unit_index, 0);
  }
  Matrix<T> forward(std::span<const T> params, const Matrix<T>& x, UnitCache<T>& cache) const override {
    cache.saved = {x};
    return affine_forward(x, params.data(), bias(params), out_);
  }
  Matrix<T> backward_input(std::span<const T> params, const Matrix<T>& dy,
                           UnitCache<T>& cache) const override {
    cache.saved.push_back(dy);  // {x, dy}
    return affine_input_grad(dy, params.data(), in_);
  }
  void backward_weight(const UnitCache<T>& cache, std::span<T> grads) const override {
    affine_weight_grad(cache.saved[0], cache.saved[1], grads.data(), grads.data() + weight_count());
  }
  std::vector<ParameterBlock> parameter_blocks() const override {
    return {{.offset = 0, .rows = in_, .cols = out_, .role = role_},
            {.offset = weight_count(), .rows = 1, .cols = out_, .role = ParameterRole::kVector}};
  }

 private:
  std::size_t weight_count() const { return static_cast<std::size_t>(in_) * out_; }
  const T* bias(std::span<const T> params) const { return params.data() + weight_count(); }
  int in_;
  int out_;
  ParameterRole role_;
};

// The residual MLP block: y = x + Linear_2(GELU(Linear_1(LayerNorm(x)))), widths d -> hidden -> d.
// Parameters in order: gamma[d], beta[d], W1[d x hidden], b1[hidden], W2[hidden x d], b2[d].
template <typename T>
class ResidualMlpUnit final : public LayerUnit<T> {
 public:
  ResidualMlpUnit(int width, int hidden) : d_(width), h_(hidden) {}
  int input_width() const override { return d_; }
  int output_width() const override { return d_; }
  std::size_t parameter_count() const override { return offset_b2() + d_; }
  void initialize(std::span<T> params, std::uint64_t seed, std::uint64_t unit_index) const override {
    // gamma near 1 and beta near 0 but not exactly, so gradient checks exercise every term.
    initialize_uniform(params.subspan(0, 2 * d_), 0.1, seed, unit_index, 0);
    for (int c = 0; c < d_; ++c) params[c] += T(1);
    initialize_uniform(params.subspan(offset_w1(), offset_w2() - offset_w1()),
                       1.0 / std::sqrt(static_cast<double>(d_)), seed, unit_index, 1);
    initialize_uniform(params.subspan(offset_w2()), 1.0 / std::sqrt(static_cast<double>(h_)), seed,
                       unit_index, 2);
  }
  Matrix<T> forward(std::span<const T> params, const Matrix<T>& x, UnitCache<T>& cache) const override {
    Matrix<T> x_hat = layer_norm_normalize(x, cache.reciprocal_std);
    Matrix<T> normed(x.rows, d_);
    for (int r = 0; r < x.rows; ++r) {
      for (int c = 0; c < d_; ++c) normed.at(r, c) = params[c] * x_hat.at(r, c) + params[d_ + c];
    }
    Matrix<T> z = affine_forward(normed, params.data() + offset_w1(), params.data() + offset_b1(), h_);
    Matrix<T> g = gelu_forward(z);
    Matrix<T> y = affine_forward(g, params.data() + offset_w2(), params.data() + offset_b2(), d_);
    for (std::size_t i = 0; i < y.values.size(); ++i) y.values[i] += x.values[i];
    cache.saved = {std::move(x_hat), std::move(normed), std::move(z), std::move(g)};
    return y;
  }
  Matrix<T> backward_input(std::span<const T> params, const Matrix<T>& dy,
                           UnitCache<T>& cache) const override {
    const Matrix<T>& x_hat = cache.saved[0];
    const Matrix<T> dg = affine_input_grad(dy, params.data() + offset_w2(), h_);
    Matrix<T> dz = gelu_input_grad(dg, cache.saved[2]);
    Matrix<T> d_normed = affine_input_grad(dz, params.data() + offset_w1(), d_);
    Matrix<T> d_x_hat(dy.rows, d_);
    for (int r = 0; r < dy.rows; ++r) {
      for (int c = 0; c < d_; ++c) d_x_hat.at(r, c) = params[c] * d_normed.at(r, c);
    }
    Matrix<T> dx = layer_norm_input_grad(d_x_hat, x_hat, cache.reciprocal_std);
    for (std::size_t i = 0; i < dx.values.size(); ++i) dx.values[i] += dy.values[i];
    // W needs x_hat, normed, g, dy, dz and d_normed; z is no longer needed.
    cache.saved[2] = std::move(dz);
    cache.saved.push_back(dy);
    cache.saved.push_back(std::move(d_normed));
    cache.reciprocal_std.clear();
    return dx;
  }
  void backward_weight(const UnitCache<T>& cache, std::span<T> grads) const override {
    const Matrix<T>& x_hat = cache.saved[0];
    const Matrix<T>& normed = cache.saved[1];
    const Matrix<T>& dz = cache.saved[2];
    const Matrix<T>& g = cache.saved[3];
    const Matrix<T>& dy = cache.saved[4];
    const Matrix<T>& d_normed = cache.saved[5];
    affine_weight_grad(g, dy, grads.data() + offset_w2(), grads.data() + offset_b2());
    affine_weight_grad(normed, dz, grads.data() + offset_w1(), grads.data() + offset_b1());
    for (int r = 0; r < dy.rows; ++r) {
      for (int c = 0; c < d_; ++c) {
        grads[c] += d_normed.at(r, c) * x_hat.at(r, c);
        grads[d_ + c] += d_normed.at(r, c);
      }
    }
  }
  std::vector<ParameterBlock> parameter_blocks() const override {
    using enum ParameterRole;
    return {{.offset = 0, .rows = 1, .cols = d_, .role = kVector},
            {.offset = static_cast<std::size_t>(d_), .rows = 1, .cols = d_, .role = kVector},
            {.offset = offset_w1(), .rows = d_, .cols = h_, .role = kMatrix},
            {.offset = offset_b1(), .rows = 1, .cols = h_, .role = kVector},
            {.offset = offset_w2(), .rows = h_, .cols = d_, .role = kMatrix},
            {.offset = offset_b2(), .rows = 1, .cols = d_, .role = kVector}};
  }

 private:
  std::size_t offset_w1() const { return 2 * static_cast<std::size_t>(d_); }
  std::size_t offset_b1() const { return offset_w1() + static_cast<std::size_t>(d_) * h_; }
  std::size_t offset_w2() const { return offset_b1() + h_; }
  std::size_t offset_b2() const { return offset_w2() + static_cast<std::size_t>(h_) * d_; }
  int d_;
  int h_;
};

}  // namespace pipesim::executor
