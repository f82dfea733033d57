#pragma once
// The layer units of the character models besides the residual MLP: a token embedding (with positions, one
// row per token; or concatenated over a context window, one row per sample), pre-LN multi-head causal
// self-attention with its residual, and the final LayerNorm with the untied output head. Activations of a
// token model hold one row per token, sequence after sequence (rows = samples x context).
#include <cmath>
#include <limits>
#include <stdexcept>

#include "executor/layer_units.h"

namespace pipesim::executor {

// Token ids arrive as the values of a float matrix (rows = samples, cols = context): exact up to 2^24, far
// above any character vocabulary, and every op then moves one tensor type.
template <typename T>
int token_id(T value, int vocab) {
  const int id = static_cast<int>(value);
  if (id < 0 || id >= vocab) throw std::out_of_range("token id outside the vocabulary");
  return id;
}

enum class EmbeddingLayout : std::uint8_t {
  kTokenRows,     // row (sample, t) = token[id] + position[t]: the GPT's input
  kConcatenated,  // row sample = token[id_0] | token[id_1] | ...: a window as one wide feature row
};

// Parameters: token table [vocab x width], then (kTokenRows) position table [context x width].
template <typename T>
class EmbeddingUnit final : public LayerUnit<T> {
 public:
  const char* kind() const override {
    return layout_ == EmbeddingLayout::kTokenRows ? "token_position_embedding" : "concatenated_embedding";
  }
  EmbeddingUnit(int vocab, int width, int context, EmbeddingLayout layout)
      : vocab_(vocab), d_(width), context_(context), layout_(layout) {}
  int input_width() const override { return context_; }
  int output_width() const override { return layout_ == EmbeddingLayout::kTokenRows ? d_ : d_ * context_; }
  int output_rows(int input_rows) const override {
    return layout_ == EmbeddingLayout::kTokenRows ? input_rows * context_ : input_rows;
  }
  double forward_flops(int input_rows) const override {
    return static_cast<double>(input_rows) * context_ * d_;
  }
  std::size_t parameter_count() const override {
    return token_table_size() + (layout_ == EmbeddingLayout::kTokenRows ? context_ * std::size_t(d_) : 0);
  }
  void initialize(std::span<T> params, std::uint64_t seed, std::uint64_t unit_index) const override {
    initialize_uniform(params, 0.5, seed, unit_index, 0);
  }
  // Both tables are embeddings: Muon leaves them to its AdamW part.
  std::vector<ParameterBlock> parameter_blocks() const override {
    std::vector<ParameterBlock> blocks{
        {.offset = 0, .rows = vocab_, .cols = d_, .role = ParameterRole::kEmbedding, .name = "token_table"}};
    if (layout_ == EmbeddingLayout::kTokenRows) {
      blocks.push_back({.offset = token_table_size(),
                        .rows = context_,
                        .cols = d_,
                        .role = ParameterRole::kEmbedding,
                        .name = "position_table"});
    }
    return blocks;
  }
  Matrix<T> forward(std::span<const T> params, const Matrix<T>& ids, UnitCache<T>& cache) const override {
    Matrix<T> y(output_rows(ids.rows), output_width());
    for (int r = 0; r < ids.rows; ++r) {
      for (int t = 0; t < context_; ++t) {
        const T* token = params.data() + static_cast<std::size_t>(token_id(ids.at(r, t), vocab_)) * d_;
        T* out = destination(y, r, t);
        for (int c = 0; c < d_; ++c) out[c] = token[c];
        if (layout_ == EmbeddingLayout::kTokenRows) {
          const T* position = params.data() + token_table_size() + static_cast<std::size_t>(t) * d_;
          for (int c = 0; c < d_; ++c) out[c] += position[c];
        }
      }
    }
    cache.saved = {ids};
    return y;
  }
  // Token ids have no gradient: zeros of the input's shape (stage 0 sends nothing back anyway).
  Matrix<T> backward_input(std::span<const T>, const Matrix<T>& dy, UnitCache<T>& cache) const override {
    cache.saved.push_back(dy);  // {ids, dy}
    return Matrix<T>(cache.saved[0].rows, context_);
  }
  // Rows are added in order, so the sums are reproducible.
  void backward_weight(const UnitCache<T>& cache, std::span<T> grads) const override {
    const Matrix<T>& ids = cache.saved[0];
    const Matrix<T>& dy = cache.saved[1];
    for (int r = 0; r < ids.rows; ++r) {
      for (int t = 0; t < context_; ++t) {
        T* token = grads.data() + static_cast<std::size_t>(token_id(ids.at(r, t), vocab_)) * d_;
        const T* in = destination(dy, r, t);
        for (int c = 0; c < d_; ++c) token[c] += in[c];
        if (layout_ == EmbeddingLayout::kTokenRows) {
          T* position = grads.data() + token_table_size() + static_cast<std::size_t>(t) * d_;
          for (int c = 0; c < d_; ++c) position[c] += in[c];
        }
      }
    }
  }

 private:
  std::size_t token_table_size() const { return static_cast<std::size_t>(vocab_) * d_; }
  // Where token t of sample r lives in the output (or its gradient).
  template <typename M>
  auto* destination(M& y, int r, int t) const {
    return layout_ == EmbeddingLayout::kTokenRows ? &y.at(r * context_ + t, 0) : &y.at(r, t * d_);
  }
  int vocab_;
  int d_;
  int context_;
  EmbeddingLayout layout_;
};

// y = x + Attention(LayerNorm(x)) W_o + b_o, causal, `heads` heads of width/heads columns each, over
// sequences of `context` rows: the pre-LN frame with W_in = W_qkv [d x 3d] and W_out = W_o [d x d].
template <typename T>
class CausalSelfAttentionUnit final : public PreNormResidualUnit<T> {
 public:
  const char* kind() const override { return "causal_self_attention"; }
  CausalSelfAttentionUnit(int width, int heads, int context)
      : PreNormResidualUnit<T>(width, 3 * width, width), d_(width), heads_(heads), context_(context) {
    if (heads < 1 || width % heads != 0) throw std::invalid_argument("width must be a multiple of heads");
  }

 protected:
  // Scores and mixing: 2 d per (query, key) pair, (context + 1) / 2 keys per query on average.
  double middle_flops(int input_rows) const override {
    return static_cast<double>(input_rows) * 2.0 * d_ * (context_ + 1);
  }
  // mixed = per sequence and head softmax(Q K^T / sqrt(d_head), causal) V; keeps qkv and the probabilities.
  Matrix<T> middle_forward(Matrix<T> qkv, std::vector<Matrix<T>>& kept) const override {
    if (qkv.rows % context_ != 0) throw std::invalid_argument("attention rows must be whole sequences");
    Matrix<T> probabilities(qkv.rows / context_ * heads_ * context_, context_);
    Matrix<T> mixed(qkv.rows, d_);
    for (int b = 0; b < qkv.rows / context_; ++b) {
      for (int h = 0; h < heads_; ++h) {
        T* p = score_block(probabilities, b, h);
        gemm(false, true, context_, context_, head_width(), scale(), query(qkv, b, h), 3 * d_, key(qkv, b, h),
             3 * d_, T(0), p, context_);
        causal_softmax(p);
        gemm(false, false, context_, head_width(), context_, T(1), p, context_, value(qkv, b, h), 3 * d_,
             T(0), &mixed.at(b * context_, h * head_width()), d_);
      }
    }
    kept.push_back(std::move(qkv));
    kept.push_back(std::move(probabilities));
    return mixed;
  }
  Matrix<T> middle_backward(const Matrix<T>& d_mixed, const std::vector<Matrix<T>>& kept) const override {
    const Matrix<T>& qkv = kept[0];
    const Matrix<T>& probabilities = kept[1];
    Matrix<T> d_qkv(d_mixed.rows, 3 * d_);
    std::vector<T> d_scores(static_cast<std::size_t>(context_) * context_);
    for (int b = 0; b < d_mixed.rows / context_; ++b) {
      for (int h = 0; h < heads_; ++h) {
        const T* p = score_block(probabilities, b, h);
        const T* d_out = &d_mixed.at(b * context_, h * head_width());
        // dP = dO V^T, dV = P^T dO.
        gemm(false, true, context_, context_, head_width(), T(1), d_out, d_, value(qkv, b, h), 3 * d_, T(0),
             d_scores.data(), context_);
        gemm(true, false, context_, head_width(), context_, T(1), p, context_, d_out, d_, T(0),
             value(d_qkv, b, h), 3 * d_);
        // Softmax backward per row: dS = P (dP - sum(dP P)), times the score scale; masked keys have P = 0.
        for (int i = 0; i < context_; ++i) {
          T dot = 0;
          for (int j = 0; j <= i; ++j) dot += d_scores[i * context_ + j] * p[i * context_ + j];
          for (int j = 0; j < context_; ++j) {
            d_scores[i * context_ + j] = scale() * p[i * context_ + j] * (d_scores[i * context_ + j] - dot);
          }
        }
        // dQ = dS K, dK = dS^T Q.
        gemm(false, false, context_, head_width(), context_, T(1), d_scores.data(), context_, key(qkv, b, h),
             3 * d_, T(0), query(d_qkv, b, h), 3 * d_);
        gemm(true, false, context_, head_width(), context_, T(1), d_scores.data(), context_, query(qkv, b, h),
             3 * d_, T(0), key(d_qkv, b, h), 3 * d_);
      }
    }
    return d_qkv;
  }

 private:
  int head_width() const { return d_ / heads_; }
  T scale() const { return T(1) / std::sqrt(static_cast<T>(head_width())); }
  // Row i of a block: keys j <= i get softmax weights, later keys exactly 0.
  void causal_softmax(T* p) const {
    for (int i = 0; i < context_; ++i) {
      T* row = p + static_cast<std::size_t>(i) * context_;
      T max_score = row[0];
      for (int j = 1; j <= i; ++j) max_score = std::max(max_score, row[j]);
      T sum = 0;
      for (int j = 0; j <= i; ++j) {
        row[j] = std::exp(row[j] - max_score);
        sum += row[j];
      }
      for (int j = 0; j <= i; ++j) row[j] /= sum;
      for (int j = i + 1; j < context_; ++j) row[j] = T(0);
    }
  }
  // The (b, h) block of the probabilities, and head h of sequence b in the Q, K and V columns.
  template <typename M>
  auto* score_block(M& p, int b, int h) const {
    return &p.at((b * heads_ + h) * context_, 0);
  }
  template <typename M>
  auto* query(M& qkv, int b, int h) const {
    return &qkv.at(b * context_, h * head_width());
  }
  template <typename M>
  auto* key(M& qkv, int b, int h) const {
    return &qkv.at(b * context_, d_ + h * head_width());
  }
  template <typename M>
  auto* value(M& qkv, int b, int h) const {
    return &qkv.at(b * context_, 2 * d_ + h * head_width());
  }
  int d_;
  int heads_;
  int context_;
};

// logits = LayerNorm(x) W + b: the final norm and the untied head. Parameters: gamma[d], beta[d],
// W[d x classes], b[classes]. The softmax cross-entropy is applied by whoever holds the labels.
template <typename T>
class NormHeadUnit final : public LayerUnit<T> {
 public:
  const char* kind() const override { return "layer_norm_head"; }
  NormHeadUnit(int width, int classes) : d_(width), classes_(classes) {}
  int input_width() const override { return d_; }
  int output_width() const override { return classes_; }
  double forward_flops(int input_rows) const override {
    return static_cast<double>(input_rows) * (2.0 * d_ * classes_ + 8.0 * d_);
  }
  std::size_t parameter_count() const override { return offset_b() + classes_; }
  void initialize(std::span<T> params, std::uint64_t seed, std::uint64_t unit_index) const override {
    initialize_layer_norm(params.subspan(0, 2 * d_), seed, unit_index);
    initialize_uniform(params.subspan(offset_w()), 1.0 / std::sqrt(static_cast<double>(d_)), seed, unit_index,
                       1);
  }
  Matrix<T> forward(std::span<const T> params, const Matrix<T>& x, UnitCache<T>& cache) const override {
    Matrix<T> x_hat;
    Matrix<T> normed = layer_norm_affine_forward(x, params.data(), x_hat, cache.reciprocal_std);
    Matrix<T> logits =
        affine_forward(normed, params.data() + offset_w(), params.data() + offset_b(), classes_);
    cache.saved = {std::move(x_hat), std::move(normed)};
    return logits;
  }
  Matrix<T> backward_input(std::span<const T> params, const Matrix<T>& dy,
                           UnitCache<T>& cache) const override {
    Matrix<T> d_normed = affine_input_grad(dy, params.data() + offset_w(), d_);
    Matrix<T> dx =
        layer_norm_affine_input_grad(d_normed, params.data(), cache.saved[0], cache.reciprocal_std);
    cache.saved.push_back(dy);
    cache.saved.push_back(std::move(d_normed));  // {x_hat, normed, dy, d_normed}
    cache.reciprocal_std.clear();
    return dx;
  }
  void backward_weight(const UnitCache<T>& cache, std::span<T> grads) const override {
    affine_weight_grad(cache.saved[1], cache.saved[2], grads.data() + offset_w(), grads.data() + offset_b());
    layer_norm_affine_weight_grad(cache.saved[3], cache.saved[0], grads.data());
  }
  std::vector<ParameterBlock> parameter_blocks() const override {
    using enum ParameterRole;
    return {
        {.offset = 0, .rows = 1, .cols = d_, .role = kVector, .name = "ln.gamma"},
        {.offset = static_cast<std::size_t>(d_), .rows = 1, .cols = d_, .role = kVector, .name = "ln.beta"},
        {.offset = offset_w(), .rows = d_, .cols = classes_, .role = kHead, .name = "weight"},
        {.offset = offset_b(), .rows = 1, .cols = classes_, .role = kVector, .name = "bias"}};
  }

 private:
  std::size_t offset_w() const { return 2 * static_cast<std::size_t>(d_); }
  std::size_t offset_b() const { return offset_w() + static_cast<std::size_t>(d_) * classes_; }
  int d_;
  int classes_;
};

}  // namespace pipesim::executor
