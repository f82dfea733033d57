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
  // Rows of the output for a given number of input rows (an embedding turns samples into tokens).
  virtual int output_rows(int input_rows) const { return input_rows; }
  // Floating-point operations of the forward over `input_rows` rows: the unit's cost for the balanced split
  // (the backward costs about twice as much in every unit, so the forward alone ranks them).
  virtual double forward_flops(int input_rows) const = 0;
  // Deterministic initial values from (seed, unit index).
  virtual void initialize(std::span<T> params, std::uint64_t seed, std::uint64_t unit_index) const = 0;
  virtual Matrix<T> forward(std::span<const T> params, const Matrix<T>& x, UnitCache<T>& cache) const = 0;
  // dL/dx from dL/dy; the cache then holds what backward_weight needs.
  virtual Matrix<T> backward_input(std::span<const T> params, const Matrix<T>& dy,
                                   UnitCache<T>& cache) const = 0;
  // Adds dL/d(params) to grads. Reads no weights, only what backward_input left.
  virtual void backward_weight(const UnitCache<T>& cache, std::span<T> grads) const = 0;
  // What the unit computes, for dumps (README "Numerics dumps" states each kind's formula).
  virtual const char* kind() const = 0;
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

// LayerNorm's gamma[d], beta[d] near 1 and 0 but not exactly, so gradient checks exercise every term.
template <typename T>
void initialize_layer_norm(std::span<T> gamma_beta, std::uint64_t seed, std::uint64_t unit_index) {
  initialize_uniform(gamma_beta, 0.1, seed, unit_index, 0);
  for (std::size_t c = 0; c < gamma_beta.size() / 2; ++c) gamma_beta[c] += T(1);
}

// y = x W + b.
template <typename T>
class LinearUnit final : public LayerUnit<T> {
 public:
  const char* kind() const override { return "linear"; }
  // role: what the weight matrix is to the optimizers (the input projection, a hidden matrix, the head).
  LinearUnit(int in, int out, ParameterRole role = ParameterRole::kMatrix)
      : in_(in), out_(out), role_(role) {}
  int input_width() const override { return in_; }
  int output_width() const override { return out_; }
  std::size_t parameter_count() const override { return static_cast<std::size_t>(in_) * out_ + out_; }
  double forward_flops(int input_rows) const override { return 2.0 * input_rows * in_ * out_; }
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
    return {
        {.offset = 0, .rows = in_, .cols = out_, .role = role_, .name = "weight"},
        {.offset = weight_count(), .rows = 1, .cols = out_, .role = ParameterRole::kVector, .name = "bias"}};
  }

 private:
  std::size_t weight_count() const { return static_cast<std::size_t>(in_) * out_; }
  const T* bias(std::span<const T> params) const { return params.data() + weight_count(); }
  int in_;
  int out_;
  ParameterRole role_;
};

// The frame the pre-LN residual units share: y = x + Linear_out(middle(Linear_in(LayerNorm(x)))), widths
// d -> inner -> middle -> d. Parameters in order: gamma[d], beta[d], W_in[d x inner], b_in[inner],
// W_out[middle x d], b_out[d]. A unit supplies its middle (GELU; multi-head causal attention) and what the
// middle's backward needs is kept after the frame's own tensors.
template <typename T>
class PreNormResidualUnit : public LayerUnit<T> {
 public:
  PreNormResidualUnit(int width, int inner, int middle) : d_(width), inner_(inner), middle_(middle) {}
  int input_width() const override { return d_; }
  int output_width() const override { return d_; }
  std::size_t parameter_count() const override { return offset_b_out() + d_; }
  // The two projections 2 d (inner + middle) per row, LayerNorm about 8 d, plus the middle's.
  double forward_flops(int input_rows) const override {
    return static_cast<double>(input_rows) * (2.0 * d_ * (inner_ + middle_) + 8.0 * d_) +
           middle_flops(input_rows);
  }
  void initialize(std::span<T> params, std::uint64_t seed, std::uint64_t unit_index) const override {
    initialize_layer_norm(params.subspan(0, 2 * d_), seed, unit_index);
    initialize_uniform(params.subspan(offset_w_in(), offset_w_out() - offset_w_in()),
                       1.0 / std::sqrt(static_cast<double>(d_)), seed, unit_index, 1);
    initialize_uniform(params.subspan(offset_w_out()), 1.0 / std::sqrt(static_cast<double>(middle_)), seed,
                       unit_index, 2);
  }
  Matrix<T> forward(std::span<const T> params, const Matrix<T>& x, UnitCache<T>& cache) const override {
    Matrix<T> x_hat;
    Matrix<T> normed = layer_norm_affine_forward(x, params.data(), x_hat, cache.reciprocal_std);
    Matrix<T> a =
        affine_forward(normed, params.data() + offset_w_in(), params.data() + offset_b_in(), inner_);
    std::vector<Matrix<T>> kept;
    Matrix<T> m = middle_forward(std::move(a), kept);
    Matrix<T> y = affine_forward(m, params.data() + offset_w_out(), params.data() + offset_b_out(), d_);
    for (std::size_t i = 0; i < y.values.size(); ++i) y.values[i] += x.values[i];
    cache.saved = {std::move(x_hat), std::move(normed), std::move(m)};
    for (Matrix<T>& k : kept) cache.saved.push_back(std::move(k));
    return y;
  }
  Matrix<T> backward_input(std::span<const T> params, const Matrix<T>& dy,
                           UnitCache<T>& cache) const override {
    const Matrix<T> dm = affine_input_grad(dy, params.data() + offset_w_out(), middle_);
    const std::vector<Matrix<T>> kept(std::make_move_iterator(cache.saved.begin() + 3),
                                      std::make_move_iterator(cache.saved.end()));
    Matrix<T> da = middle_backward(dm, kept);
    Matrix<T> d_normed = affine_input_grad(da, params.data() + offset_w_in(), d_);
    Matrix<T> dx =
        layer_norm_affine_input_grad(d_normed, params.data(), cache.saved[0], cache.reciprocal_std);
    for (std::size_t i = 0; i < dx.values.size(); ++i) dx.values[i] += dy.values[i];
    // W needs x_hat, normed, the middle's output, dy, d(inner) and d(normed); the middle's tensors go.
    cache.saved.resize(3);
    cache.saved.push_back(dy);
    cache.saved.push_back(std::move(da));
    cache.saved.push_back(std::move(d_normed));
    cache.reciprocal_std.clear();
    return dx;
  }
  void backward_weight(const UnitCache<T>& cache, std::span<T> grads) const override {
    const Matrix<T>& x_hat = cache.saved[0];
    const Matrix<T>& normed = cache.saved[1];
    const Matrix<T>& m = cache.saved[2];
    const Matrix<T>& dy = cache.saved[3];
    const Matrix<T>& da = cache.saved[4];
    const Matrix<T>& d_normed = cache.saved[5];
    affine_weight_grad(m, dy, grads.data() + offset_w_out(), grads.data() + offset_b_out());
    affine_weight_grad(normed, da, grads.data() + offset_w_in(), grads.data() + offset_b_in());
    layer_norm_affine_weight_grad(d_normed, x_hat, grads.data());
  }
  std::vector<ParameterBlock> parameter_blocks() const override {
    using enum ParameterRole;
    return {
        {.offset = 0, .rows = 1, .cols = d_, .role = kVector, .name = "ln.gamma"},
        {.offset = static_cast<std::size_t>(d_), .rows = 1, .cols = d_, .role = kVector, .name = "ln.beta"},
        {.offset = offset_w_in(), .rows = d_, .cols = inner_, .role = kMatrix, .name = "w_in"},
        {.offset = offset_b_in(), .rows = 1, .cols = inner_, .role = kVector, .name = "b_in"},
        {.offset = offset_w_out(), .rows = middle_, .cols = d_, .role = kMatrix, .name = "w_out"},
        {.offset = offset_b_out(), .rows = 1, .cols = d_, .role = kVector, .name = "b_out"}};
  }

 protected:
  int width() const { return d_; }
  // m = middle(a), keeping what middle_backward needs.
  virtual Matrix<T> middle_forward(Matrix<T> a, std::vector<Matrix<T>>& kept) const = 0;
  // d(a) from d(m) and what middle_forward kept.
  virtual Matrix<T> middle_backward(const Matrix<T>& dm, const std::vector<Matrix<T>>& kept) const = 0;
  virtual double middle_flops(int input_rows) const = 0;

 private:
  std::size_t offset_w_in() const { return 2 * static_cast<std::size_t>(d_); }
  std::size_t offset_b_in() const { return offset_w_in() + static_cast<std::size_t>(d_) * inner_; }
  std::size_t offset_w_out() const { return offset_b_in() + inner_; }
  std::size_t offset_b_out() const { return offset_w_out() + static_cast<std::size_t>(middle_) * d_; }
  int d_;
  int inner_;
  int middle_;
};

// The residual MLP block: y = x + Linear_2(GELU(Linear_1(LayerNorm(x)))), widths d -> hidden -> d.
template <typename T>
class ResidualMlpUnit final : public PreNormResidualUnit<T> {
 public:
  const char* kind() const override { return "residual_mlp"; }
  ResidualMlpUnit(int width, int hidden) : PreNormResidualUnit<T>(width, hidden, hidden), h_(hidden) {}

 protected:
  Matrix<T> middle_forward(Matrix<T> z, std::vector<Matrix<T>>& kept) const override {
    Matrix<T> g = gelu_forward(z);
    kept.push_back(std::move(z));
    return g;
  }
  Matrix<T> middle_backward(const Matrix<T>& dg, const std::vector<Matrix<T>>& kept) const override {
    return gelu_input_grad(dg, kept[0]);
  }
  // GELU: about 20 operations per element.
  double middle_flops(int input_rows) const override { return 20.0 * input_rows * h_; }

 private:
  int h_;
};

}  // namespace pipesim::executor
