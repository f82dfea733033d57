// Multi-token prediction (cost_models/transformer/mtp_modules.h): a module's parameters and model FLOPs by
// hand, its place on the last stage beside the output layer (under every split), and the embedding's copy
// that stage holds when it is not the first.
#include <gtest/gtest.h>

#include "cost_models/transformer/mtp_modules.h"
#include "cost_models/transformer/shapes_flops.h"
#include "cost_models/transformer/stage_costs.h"
#include "tests/scenario_text.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

// Four dense SwiGLU layers of h = 512, f = 1024, 8 heads; s = 256, vocab 1000.
TransformerSetup setup_with(int mtp_layers, const std::string& pipeline = "{stages: 2, microbatches: 4}") {
  const std::string yaml = fmt::format(
      "model: {{layers: 4, hidden: 512, heads: 8, seq_len: 256, vocab: 1000, mlp: swiglu, ffn_hidden: 1024, "
      "norm: rmsnorm, mtp_layers: {}}}\n"
      "hardware: {{profile: h100-sxm5-80gb}}\n"
      "pipeline: {}\n",
      mtp_layers, pipeline);
  return *test::scenario_from_yaml(yaml).transformer;
}

TEST(MtpCosts, AModulesParametersAndFlopsByHand) {
  const TransformerModel none = setup_with(0).model, two = setup_with(2).model;
  // A module: one layer (attention 4·512² and the MLP 3·512·1024) and the 2h -> h projection.
  const double layer = 4.0 * 512 * 512 + 3.0 * 512 * 1024, module = layer + 2.0 * 512 * 512;
  EXPECT_DOUBLE_EQ(model_parameters(two) - model_parameters(none), 2 * module);
  EXPECT_DOUBLE_EQ(active_parameters(two) - active_parameters(none), 2 * module);
  // Its FLOPs: the layer's (as one layer of the model), the projection's and the output layer's, each
  // forward and twice backward.
  const double per_layer =
      (model_flops_per_sample(none) - 3 * 2.0 * 256 * 512 * 1000) / 4;  // the model's layers alike
  const double expected = per_layer + 3 * 2.0 * 256 * 2 * 512 * 512 + 3 * 2.0 * 256 * 512 * 1000;
  EXPECT_NEAR(model_flops_per_sample(two) - model_flops_per_sample(none), 2 * expected, 1e-6 * expected);
}

// The modules run on the last stage, beside the output layer; that stage also holds a copy of the embedding
// (the first stage's is the model's), which a single stage does not need.
TEST(MtpCosts, TheModulesRunOnTheLastStageWithTheEmbeddingsCopy) {
  const std::vector<StageCosts> without = transformer_stage_costs(setup_with(0), 1, 2);
  const std::vector<StageCosts> with = transformer_stage_costs(setup_with(1), 1, 2);
  EXPECT_DOUBLE_EQ(with[0].forward_s, without[0].forward_s);
  EXPECT_DOUBLE_EQ(with[0].parameters, without[0].parameters);
  EXPECT_GT(with[1].forward_s, without[1].forward_s);
  EXPECT_GT(with[1].backward_input_s, without[1].backward_input_s);
  EXPECT_GT(with[1].activation_bytes, without[1].activation_bytes);
  const double module = 4.0 * 512 * 512 + 3.0 * 512 * 1024 + 2.0 * 512 * 512;
  const double norms = 3 * 512.0, embedding = 1000.0 * 512;
  EXPECT_DOUBLE_EQ(with[1].parameters - without[1].parameters, module + norms + embedding);
  // The stage's model FLOPs are the module's.
  const TransformerModel one = setup_with(1).model, zero = setup_with(0).model;
  EXPECT_NEAR(with[1].model_flops - without[1].model_flops,
              model_flops_per_sample(one) - model_flops_per_sample(zero), 1e-3);
  // One stage holds the embedding itself: no copy.
  const std::vector<StageCosts> alone =
      transformer_stage_costs(setup_with(1, "{stages: 1, microbatches: 4}"), 1, 1);
  const std::vector<StageCosts> alone_without =
      transformer_stage_costs(setup_with(0, "{stages: 1, microbatches: 4}"), 1, 1);
  EXPECT_DOUBLE_EQ(alone[0].parameters - alone_without[0].parameters, module + norms);
}

// A balanced split keeps the modules with the output layer and counts what the even split counts.
TEST(MtpCosts, ABalancedSplitKeepsThemWithTheOutputLayer) {
  const auto total = [](const std::vector<StageCosts>& stages, double StageCosts::*field) {
    double sum = 0;
    for (const StageCosts& c : stages) sum += c.*field;
    return sum;
  };
  const auto costs = [](int mtp, LayerSplit split) {
    TransformerSetup setup = setup_with(mtp);
    setup.split = split;
    return transformer_stage_costs(setup, 1, 2);
  };
  const std::vector<StageCosts> split = costs(1, LayerSplit::kBalanced);
  ASSERT_EQ(split.size(), 2u);
  EXPECT_TRUE(split[1].output);
  // The modules add the same to either split.
  for (double StageCosts::*field : {&StageCosts::parameters, &StageCosts::model_flops}) {
    EXPECT_NEAR(total(split, field) - total(costs(0, LayerSplit::kBalanced), field),
                total(costs(1, LayerSplit::kEven), field) - total(costs(0, LayerSplit::kEven), field),
                1e-6 * total(split, field));
  }
  // The output layer's stage, with its modules, is the heavier end: the split gives it fewer layers.
  EXPECT_LE(split[1].layers, split[0].layers);
}

}  // namespace
}  // namespace pipesim
