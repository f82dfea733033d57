// The character models' layer units (embedding, causal self-attention, final norm with the head and its
// loss) against central finite differences in double precision; causality; W reads only what I left, so
// I then W equals B whatever runs in between; the GPT whole against finite differences; the balanced split
// of the models' units by cost.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "executor/model.h"
#include "tests/executor/gradient_check_util.h"
#include "tests/train/executor_test_util.h"

namespace pipesim::executor {
namespace {

using test::central_difference;
using test::max_gradient_error;
using test::random_matrix;
using test::relative_error;

Matrix<double> token_ids(int rows, int context, int vocab, std::uint64_t stream) {
  Matrix<double> ids(rows, context);
  for (std::size_t i = 0; i < ids.values.size(); ++i) {
    ids.values[i] = static_cast<double>(hash_key({stream, i}) % static_cast<std::uint64_t>(vocab));
  }
  return ids;
}

TEST(ExecutorGradientCheck, TokenEmbeddingMatchesFiniteDifferences) {
  const EmbeddingUnit<double> per_token(5, 3, 4, EmbeddingLayout::kTokenRows);
  EXPECT_LT(max_gradient_error(per_token, token_ids(3, 4, 5, 1), false), 1e-8);
  const EmbeddingUnit<double> concatenated(5, 3, 4, EmbeddingLayout::kConcatenated);
  EXPECT_LT(max_gradient_error(concatenated, token_ids(3, 4, 5, 2), false), 1e-8);
  EXPECT_EQ(per_token.output_rows(3), 12);
  EXPECT_EQ(concatenated.output_rows(3), 3);
  EXPECT_EQ(concatenated.output_width(), 12);
}

TEST(ExecutorGradientCheck, EmbeddingRowsAreTheTokenPlusThePositionVector) {
  const EmbeddingUnit<double> unit(3, 2, 2, EmbeddingLayout::kTokenRows);
  // token table rows 0..2, then position rows 0..1.
  const std::vector<double> params{1, 2, 10, 20, 100, 200, 0.5, 0.25, -1, -2};
  Matrix<double> ids(1, 2);
  ids.values = {2, 0};
  UnitCache<double> cache;
  const Matrix<double> y = unit.forward(params, ids, cache);
  EXPECT_EQ(y.values, (std::vector<double>{100.5, 200.25, 0, 0}));
}

TEST(ExecutorGradientCheck, CausalSelfAttentionMatchesFiniteDifferences) {
  const CausalSelfAttentionUnit<double> unit(6, 2, 4);
  const double error = max_gradient_error(unit, 8);  // two sequences of four tokens
  RecordProperty("max_relative_error", fmt::format("{:.3e}", error));
  EXPECT_LT(error, 1e-6);
  EXPECT_LT(max_gradient_error(CausalSelfAttentionUnit<double>(4, 1, 3), 3), 1e-6);
}

TEST(ExecutorGradientCheck, AttentionIsCausal) {
  const CausalSelfAttentionUnit<double> unit(4, 2, 3);
  std::vector<double> params(unit.parameter_count());
  unit.initialize(params, 1, 1);
  Matrix<double> x = random_matrix(6, 4, 5);
  UnitCache<double> cache;
  const Matrix<double> before = unit.forward(params, x, cache);
  for (int c = 0; c < 4; ++c) x.at(2, c) += 1.0;  // the last token of the first sequence
  const Matrix<double> after = unit.forward(params, x, cache);
  for (int r = 0; r < 6; ++r) {
    for (int c = 0; c < 4; ++c) {
      if (r == 2) {
        EXPECT_NE(before.at(r, c), after.at(r, c));
      } else {
        EXPECT_EQ(before.at(r, c), after.at(r, c)) << "row " << r;  // earlier tokens, other sequence
      }
    }
  }
}

// The head with its loss: L = mean cross-entropy of LayerNorm(x) W + b against labels.
TEST(ExecutorGradientCheck, NormHeadWithCrossEntropyMatchesFiniteDifferences) {
  const NormHeadUnit<double> unit(5, 7);
  std::vector<double> params(unit.parameter_count());
  unit.initialize(params, 3, 2);
  Matrix<double> x = random_matrix(4, 5, 9);
  const std::vector<int> labels{6, 0, 3, 3};
  auto loss = [&] {
    UnitCache<double> cache;
    Matrix<double> unused;
    return softmax_cross_entropy(unit.forward(params, x, cache), labels, unused);
  };
  UnitCache<double> cache;
  Matrix<double> logits_grad;
  softmax_cross_entropy(unit.forward(params, x, cache), labels, logits_grad);
  const Matrix<double> dx = unit.backward_input(params, logits_grad, cache);
  std::vector<double> grads(params.size(), 0.0);
  unit.backward_weight(cache, grads);
  double worst = 0;
  for (std::size_t i = 0; i < params.size(); ++i) {
    worst = std::max(worst, relative_error(grads[i], central_difference(params, i, loss)));
  }
  for (std::size_t i = 0; i < x.values.size(); ++i) {
    worst = std::max(worst, relative_error(dx.values[i], central_difference(x.values, i, loss)));
  }
  EXPECT_LT(worst, 1e-6);
}

// Every unit of both models, composed, with the loss: a tiny GPT's gradient against finite differences.
TEST(ExecutorGradientCheck, TinyGptMatchesFiniteDifferences) {
  ModelShape shape{.input_width = 4,
                   .width = 4,
                   .blocks = 1,
                   .classes = 5,
                   .kind = ModelKind::kGpt,
                   .token_input = true,
                   .heads = 2};
  const auto units = build_units<double>(shape);
  ASSERT_EQ(static_cast<int>(units.size()), shape.unit_count());
  const StageModel<double> model(units, 0, static_cast<int>(units.size()));
  std::vector<double> params(model.parameter_count());
  model.initialize(params, 5);
  const Matrix<double> ids = token_ids(2, 4, 5, 3);
  std::vector<int> labels;
  for (std::size_t i = 0; i < 8; ++i) labels.push_back(static_cast<int>(hash_key({4, i}) % 5));
  auto loss = [&] {
    std::vector<UnitCache<double>> caches;
    Matrix<double> unused;
    return softmax_cross_entropy(model.forward(params, ids, caches), labels, unused);
  };
  std::vector<UnitCache<double>> caches;
  Matrix<double> dy;
  softmax_cross_entropy(model.forward(params, ids, caches), labels, dy);
  model.backward_input(params, dy, caches);
  std::vector<double> grads(params.size(), 0.0);
  model.backward_weight(caches, grads);
  double worst = 0;
  for (std::size_t i = 0; i < params.size(); i += 3) {
    worst = std::max(worst, relative_error(grads[i], central_difference(params, i, loss)));
  }
  RecordProperty("max_relative_error", fmt::format("{:.3e}", worst));
  EXPECT_LT(worst, 1e-6);
}

// B = I then W at once; split, W runs later after other microbatches' work and with the weights changed
// (a U in between): W reads only what I left, so the gradients are bit-identical.
void expect_split_backward_equals_full(const LayerUnit<float>& unit, const Matrix<float>& x) {
  std::vector<float> params(unit.parameter_count());
  unit.initialize(params, 9, 4);
  Matrix<float> dy(unit.output_rows(x.rows), unit.output_width());
  for (std::size_t i = 0; i < dy.values.size(); ++i)
    dy.values[i] = static_cast<float>(symmetric_uniform({8, i}));

  UnitCache<float> full;
  unit.forward(params, x, full);
  const Matrix<float> dx_full = unit.backward_input(params, dy, full);
  std::vector<float> grads_full(params.size(), 0.0F);
  unit.backward_weight(full, grads_full);

  UnitCache<float> split;
  unit.forward(params, x, split);
  const Matrix<float> dx_split = unit.backward_input(params, dy, split);
  UnitCache<float> other;  // another microbatch's F and I in between, then new weights
  unit.forward(params, x, other);
  unit.backward_input(params, dy, other);
  for (float& p : params) p = -p;
  std::vector<float> grads_split(params.size(), 0.0F);
  unit.backward_weight(split, grads_split);
  EXPECT_TRUE(executor::test::bit_identical(grads_full, grads_split));
  EXPECT_TRUE(executor::test::bit_identical(dx_full.values, dx_split.values));
}

Matrix<float> float_matrix(const Matrix<double>& m) {
  Matrix<float> f(m.rows, m.cols);
  for (std::size_t i = 0; i < m.values.size(); ++i) f.values[i] = static_cast<float>(m.values[i]);
  return f;
}

TEST(ExecutorSplitBackward, InputThenWeightEqualsTheFullBackwardForEveryUnit) {
  expect_split_backward_equals_full(LinearUnit<float>(5, 3), float_matrix(random_matrix(4, 5, 1)));
  expect_split_backward_equals_full(ResidualMlpUnit<float>(6, 24), float_matrix(random_matrix(4, 6, 2)));
  expect_split_backward_equals_full(EmbeddingUnit<float>(5, 3, 4, EmbeddingLayout::kTokenRows),
                                    float_matrix(token_ids(3, 4, 5, 3)));
  expect_split_backward_equals_full(EmbeddingUnit<float>(5, 3, 4, EmbeddingLayout::kConcatenated),
                                    float_matrix(token_ids(3, 4, 5, 4)));
  expect_split_backward_equals_full(CausalSelfAttentionUnit<float>(6, 2, 4),
                                    float_matrix(random_matrix(8, 6, 5)));
  expect_split_backward_equals_full(NormHeadUnit<float>(5, 7), float_matrix(random_matrix(4, 5, 6)));
}

TEST(ExecutorModels, UnitCountsAndTheBalancedSplitByCost) {
  const ModelShape image{.input_width = 784, .width = 32, .blocks = 4, .classes = 10};
  EXPECT_EQ(image.unit_count(), 6);
  const ModelShape chars{.input_width = 16, .width = 32, .blocks = 2, .classes = 60, .token_input = true};
  EXPECT_EQ(chars.unit_count(), 5);  // embedding, projection, 2 blocks, head
  const ModelShape gpt{.input_width = 16, .width = 32, .blocks = 3, .classes = 60, .kind = ModelKind::kGpt};
  EXPECT_EQ(gpt.unit_count(), 8);  // embedding, 3 x (attention, MLP), head
  EXPECT_EQ(blocks_for_stages(gpt, 8), 3);
  EXPECT_EQ(blocks_for_stages(gpt, 9), 4);
  EXPECT_EQ(blocks_for_stages(image, 9), 7);
  // Costs by hand for the image model with 2 samples: input 2*2*784*32, each block 2*(4*32*128 + 8*32 +
  // 20*128), head 2*2*32*10. The input projection costs about 3 blocks, so on 3 stages it stands alone.
  const auto units = build_units<float>(image);
  const std::vector<double> costs = unit_costs(units, 2);
  EXPECT_EQ(costs[0], 2.0 * 2 * 784 * 32);
  EXPECT_EQ(costs[1], 2.0 * (4 * 32 * 128 + 8 * 32 + 20 * 128));
  EXPECT_EQ(costs[5], 2.0 * 2 * 32 * 10);
  EXPECT_EQ(balanced_unit_split(costs, 3), (std::vector<int>{0, 1, 3, 6}));
  // The GPT's attention costs rows x (8 d^2 + 8 d + 2 d (T + 1)) with rows = samples x T after the
  // embedding (projections to q, k, v and back, LayerNorm, scores and mixing).
  const auto gpt_units = build_units<float>(gpt);
  EXPECT_EQ(unit_costs(gpt_units, 2)[1], 32.0 * (8 * 32 * 32 + 8 * 32 + 2 * 32 * 17));
}

}  // namespace
}  // namespace pipesim::executor
