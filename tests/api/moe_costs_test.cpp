// A mixture of experts (cost_models/transformer/moe_layer.h): parameter counts of published models from
// their configs, the FLOPs a token's experts cost, an all-to-all's bytes and time by hand, expert
// parallelism halving the experts' memory and reducing their gradients over its own replicas, the routed
// load's effect, and the checks on parallel.expert.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "cost_models/transformer/collectives.h"
#include "cost_models/transformer/cost_model.h"
#include "cost_models/transformer/moe_layer.h"
#include "cost_models/transformer/parallel_comm.h"
#include "cost_models/transformer/shapes_flops.h"
#include "cost_models/transformer/stage_costs.h"
#include "import/hf_config.h"
#include "tests/error_text.h"
#include "tests/scenario_text.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using transformer::expert_all_to_all_seconds;
using transformer::moe_dispatch_bytes;

// Mixtral-8x7B's config.json (the keys that shape it): 46.7 B parameters, 12.9 B active (Mistral's figures).
const char* const kMixtral = R"({"model_type": "mixtral", "num_hidden_layers": 32, "hidden_size": 4096,
  "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
  "max_position_embeddings": 32768, "num_local_experts": 8, "num_experts_per_tok": 2, "hidden_act": "silu",
  "tie_word_embeddings": false, "rms_norm_eps": 1e-05})";

// Qwen3-30B-A3B's: 30.5 B parameters, 3.3 B active (Qwen's model card).
const char* const kQwen3Moe = R"({"model_type": "qwen3_moe", "num_hidden_layers": 48, "hidden_size": 2048,
  "head_dim": 128, "num_attention_heads": 32, "num_key_value_heads": 4, "intermediate_size": 6144,
  "moe_intermediate_size": 768, "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936,
  "max_position_embeddings": 40960, "hidden_act": "silu", "tie_word_embeddings": false})";

TEST(MoeCosts, PublishedModelsHaveTheirParameterAndActiveCounts) {
  const TransformerModel mixtral = read_hf_config(kMixtral, "mixtral.json", 4096).model;
  EXPECT_NEAR(model_parameters(mixtral) / 1e9, 46.7, 0.05);
  EXPECT_NEAR(active_parameters(mixtral) / 1e9, 12.9, 0.05);
  const TransformerModel qwen = read_hf_config(kQwen3Moe, "qwen.json", 4096).model;
  EXPECT_NEAR(model_parameters(qwen) / 1e9, 30.5, 0.05);
  EXPECT_NEAR(active_parameters(qwen) / 1e9, 3.3, 0.06);
  // A dense model's active parameters are all of them.
  TransformerModel dense = mixtral;
  dense.moe = {};
  EXPECT_EQ(active_parameters(dense), model_parameters(dense));
}

// A token's k experts of width f cost what a dense MLP of width k·f costs, plus the router's h x E GEMM
// (2·h·E FLOPs per token in the forward, twice that in the backward), in the MoE layers only.
TEST(MoeCosts, ModelFlopsCountTheExpertsATokenPassesThroughAndTheRouter) {
  TransformerModel moe = read_hf_config(kMixtral, "mixtral.json", 4096).model;
  moe.moe.dense_layers = 2;
  TransformerModel wide = moe;
  wide.moe = {};
  wide.ffn_hidden = 2 * 14336;
  TransformerModel narrow = wide;
  narrow.ffn_hidden = 14336;
  const double s = moe.seq_len, router = 3 * 2 * s * 4096 * 8;
  const double per_wide_layer = (model_flops_per_sample(wide) - model_flops_per_sample(narrow)) / 32;
  EXPECT_NEAR(model_flops_per_sample(moe), model_flops_per_sample(wide) - 2 * per_wide_layer + 30 * router,
              1e-6 * model_flops_per_sample(moe));
}

TransformerSetup moe_setup(int data, int expert, int gpus_per_node = 8,
                           const std::string& more_parallel = "") {
  const std::string yaml = fmt::format(
      "model: {{layers: 4, hidden: 1024, heads: 8, seq_len: 2048, vocab: 32000, mlp: swiglu,\n"
      "        moe: {{experts: 8, experts_per_token: 2, expert_ffn_hidden: 2048}}}}\n"
      "hardware:\n"
      "  profile: h100-sxm5-80gb\n"
      "  link: {{bandwidth_gb_per_s: 100, latency_us: 10, source: test}}\n"
      "  inter_node_link: {{bandwidth_gb_per_s: 25, latency_us: 20, source: test}}\n"
      "parallel: {{data: {}, expert: {}, gpus_per_node: {}{}}}\n"
      "pipeline: {{stages: 2, microbatches: 4}}\n",
      data, expert, gpus_per_node, more_parallel);
  return *test::scenario_from_yaml(yaml).transformer;
}

// One dispatch moves T·k·h·2 bytes from each rank (T = 2048 tokens, k = 2, h = 1024, bf16: 8 MiB), an e-th of
// it to each rank. Inside a node of 8: 7/8 of it at 100 GB/s plus 10 us; the forward dispatches and combines
// (two), the input gradient the same two back.
TEST(MoeCosts, AnAllToAllsBytesAndTimeByHand) {
  const TransformerSetup inside = moe_setup(8, 8);
  const double bytes = 2048.0 * 2 * 1024 * 2;
  EXPECT_DOUBLE_EQ(moe_dispatch_bytes(inside.model, 1, 1), bytes);
  const double one = 10e-6 + bytes * 7 / 8 / 100e9;
  EXPECT_NEAR(expert_all_to_all_seconds(inside, 1, 2).forward, 2 * one, 1e-12);
  EXPECT_NEAR(expert_all_to_all_seconds(inside, 1, 2).backward_input, 2 * one, 1e-12);
  // Nodes of 4: 3 of 8 peers over the link, 4 over the NIC (25 GB/s), at once: the NIC's side is slower.
  const TransformerSetup across = moe_setup(8, 8, 4);
  EXPECT_NEAR(expert_all_to_all_seconds(across, 1, 2).forward, 2 * (20e-6 + bytes * 4 / 8 / 25e9), 1e-12);
  // The most loaded rank takes 1.5 times the mean: its all-to-alls take 1.5 times as long.
  TransformerSetup skewed = inside;
  skewed.model.moe.load_imbalance = 1.5;
  EXPECT_NEAR(expert_all_to_all_seconds(skewed, 1, 2).forward, 1.5 * 2 * one, 1e-12);
  // Dropping tokens above a capacity of 1.25 bounds it.
  skewed.model.moe.capacity_factor = 1.25;
  EXPECT_NEAR(expert_all_to_all_seconds(skewed, 1, 2).forward, 1.25 * 2 * one, 1e-12);
  // No expert parallelism: no all-to-all.
  EXPECT_EQ(expert_all_to_all_seconds(moe_setup(8, 1), 1, 2).forward, 0);
  EXPECT_EQ(all_to_all_seconds(bytes, 1, 1, nullptr, nullptr), 0);
}

// DeepEP sends a token once to each other node holding one of its experts. Top-8 of 128 experts on 4 nodes
// of 32: a node gets none with chance (96·95·…·89)/(128·127·…·121) = 0.0927, so 3 x 0.9073 = 2.722 other
// nodes; top-1 reaches one other node with chance (n - 1)/n; top-E every node.
TEST(MoeCosts, DeepEpSendsATokenOnceToEachNodeItsExpertsAreOn) {
  EXPECT_NEAR(transformer::deepep_remote_nodes_per_token(128, 8, 4), 2.7218, 1e-4);
  EXPECT_NEAR(transformer::deepep_remote_nodes_per_token(8, 1, 4), 0.75, 1e-12);
  EXPECT_NEAR(transformer::deepep_remote_nodes_per_token(8, 8, 4), 3, 1e-12);
  EXPECT_EQ(transformer::deepep_remote_nodes_per_token(128, 8, 1), 0);
  // EP 8 on nodes of 4 (2 nodes), top-2 of 8: the plain all-to-all sends 4/8 of the k copies over the NIC,
  // DeepEP each token once to the other node when one of its two experts is there (1 - 12/56 of the time).
  TransformerSetup plain = moe_setup(8, 8, 4);
  TransformerSetup deepep = plain;
  deepep.parallel.deepep_dispatch = true;
  const double bytes = 2048.0 * 2 * 1024 * 2, token = bytes / 2;
  const double nic_s = 20e-6 + token * (1 - 12.0 / 56) / 25e9;
  const double nvlink_s = 10e-6 + bytes * 3 / 8 / 100e9 + bytes * 4 / 8 * 3 / 4 / 100e9;
  EXPECT_NEAR(expert_all_to_all_seconds(deepep, 1, 2).forward, 2 * std::max(nic_s, nvlink_s), 1e-12);
  EXPECT_LT(expert_all_to_all_seconds(deepep, 1, 2).forward, expert_all_to_all_seconds(plain, 1, 2).forward);
  // Inside one node it is the all-to-all.
  TransformerSetup one_node = moe_setup(8, 8);
  const double inside = expert_all_to_all_seconds(one_node, 1, 2).forward;
  one_node.parallel.deepep_dispatch = true;
  EXPECT_EQ(expert_all_to_all_seconds(one_node, 1, 2).forward, inside);
}

// One slot of a forward and another microbatch's backward (DualPipe, Combined 1F1B): the compute stream runs
// both ops' compute, the communication stream both ops' all-to-alls, so the slot takes the longer of the two
// sums; a job without all-to-alls gets exactly the two ops' sum.
TEST(MoeCosts, AForwardAndABackwardInOneSlotHideEachOthersAllToAlls) {
  const TransformerSetup across = moe_setup(8, 8, 4);
  const PipelineLayout layout = PipelineLayout::linear(2);
  const TransformerCostModel costs(across, 1, layout);
  const StageCosts& c = costs.stages()[0];
  ASSERT_GT(c.forward_comm_s, 0);
  EXPECT_NEAR(c.forward_comm_s, 2 * expert_all_to_all_seconds(across, 1, 2).forward, 1e-12);  // two layers
  const double comm = c.forward_comm_s + c.backward_input_comm_s;
  const double compute = c.forward_s + c.backward_input_s + c.backward_weight_s - comm;
  const TimeNs slot = costs.overlapped_duration(forward(0, 1), backward(0, 0));
  EXPECT_EQ(slot, static_cast<TimeNs>(std::llround(std::max(compute, comm) * 1e9)));
  EXPECT_LT(slot, costs.duration(forward(0, 1)) + costs.duration(backward(0, 0)));
  const TransformerCostModel dense(moe_setup(8, 1), 1, layout);
  EXPECT_EQ(dense.overlapped_duration(forward(0, 1), backward(0, 0)),
            dense.duration(forward(0, 1)) + dense.duration(backward(0, 0)));
}

// What the overlap buys shows in a run: DualPipe hides its all-to-alls and 1F1B cannot, so DualPipe's lead
// over 1F1B on a job whose all-to-alls cross nodes is well above its lead on the same job without them
// (expert parallelism 1: the bubble's difference alone), which is all it would be with the two ops' sum as
// the slot.
TEST(MoeCosts, DualPipesLeadOver1f1bComesFromHidingTheAllToAlls) {
  const auto lead = [](int expert) {
    const std::string yaml = fmt::format(
        "model: {{layers: 8, hidden: 1024, heads: 8, seq_len: 2048, vocab: 32000, mlp: swiglu,\n"
        "        moe: {{experts: 16, experts_per_token: 4, expert_ffn_hidden: 1024}}}}\n"
        "hardware:\n"
        "  profile: h100-sxm5-80gb\n"
        "  link: {{bandwidth_gb_per_s: 100, latency_us: 10, source: test}}\n"
        "  inter_node_link: {{bandwidth_gb_per_s: 25, latency_us: 20, source: test}}\n"
        "parallel: {{data: 8, expert: {}, gpus_per_node: 4}}\n"
        "pipeline: {{stages: 4, microbatches: 16}}\n",
        expert);
    const Scenario s = test::scenario_from_yaml(yaml);
    return test::run_schedule(s, "dualpipe").metrics.throughput_samples_per_s /
           test::run_schedule(s, "1f1b-flush").metrics.throughput_samples_per_s;
  };
  const double without = lead(1), with = lead(8);
  EXPECT_GT(with, without * 1.2) << without << " " << with;
}

TEST(MoeCosts, ExpertParallelismDividesTheExpertsMemoryAndReducesTheirGradientsOverItsReplicas) {
  const std::vector<StageCosts> one = transformer_stage_costs(moe_setup(8, 1), 1, 2);
  const std::vector<StageCosts> two = transformer_stage_costs(moe_setup(8, 2), 1, 2);
  const std::vector<StageCosts> eight = transformer_stage_costs(moe_setup(8, 8), 1, 2);
  // Two layers a stage, 8 experts of 3 x 1024 x 2048 each.
  const double experts = 2 * 8 * 3.0 * 1024 * 2048;
  EXPECT_DOUBLE_EQ(one[0].expert_parameters, experts);
  EXPECT_DOUBLE_EQ(two[0].expert_parameters, experts / 2);
  EXPECT_DOUBLE_EQ(one[0].parameters - one[0].expert_parameters,
                   two[0].parameters - two[0].expert_parameters);
  EXPECT_DOUBLE_EQ(one[0].parameter_bytes - two[0].parameter_bytes, experts / 2 * 2);
  // EP = d: every expert has one replica, so only the rest reduces; with EP 2 the experts reduce over 4.
  TransformerSetup dense_part = moe_setup(8, 8);
  const double rest_bytes = (eight[0].parameters - eight[0].expert_parameters) * 2;
  EXPECT_NEAR(eight[0].gradient_reduce_s, data_parallel_reduce_seconds(dense_part, rest_bytes, 2), 1e-12);
  EXPECT_GT(two[0].gradient_reduce_s, eight[0].gradient_reduce_s);
  // The experts' FLOPs are the same however they are spread; the all-to-alls are what EP adds to F.
  EXPECT_DOUBLE_EQ(one[0].model_flops, eight[0].model_flops);
  EXPECT_GT(eight[0].forward_s, one[0].forward_s);
}

// Megatron's MoE parallel folding: with t = 2 and each expert whole on a rank (u = 1), the experts regroup a
// stage's t x d = 8 ranks as e = 8 (more than d = 4), each rank computing its T/t tokens' copies at the full
// expert width; with u = t = 2 they take T·k copies at half the width over e = 4. Same work either way.
TEST(MoeCosts, ExpertTensorParallelismRegroupsTheStagesRanks) {
  const TransformerSetup folded =
      moe_setup(4, 8, 8, ", tensor: 2, sequence_parallel: true, expert_tensor: 1");
  ASSERT_EQ(expert_parallel_requirement(folded.model, folded.parallel), "");
  EXPECT_EQ(folded.parallel.expert_weight_replicas(), 1);
  const transformer::ExpertLayout layout = transformer::expert_layout(folded);
  EXPECT_DOUBLE_EQ(layout.copies(folded.model, 2048), 2048.0 * 2 / 2);
  const double expert = 3.0 * 1024 * 2048;
  EXPECT_DOUBLE_EQ(transformer::moe_rank_expert_parameters(folded.model, layout), expert);  // 8 / 8 whole
  TransformerSetup split = folded;
  split.parallel.expert = 4;
  split.parallel.expert_tensor = 0;  // the tensor degree
  const transformer::ExpertLayout split_layout = transformer::expert_layout(split);
  EXPECT_DOUBLE_EQ(split_layout.copies(split.model, 2048), 2048.0 * 2);
  EXPECT_DOUBLE_EQ(transformer::moe_rank_expert_parameters(split.model, split_layout), 2 * expert / 2);
  EXPECT_DOUBLE_EQ(flops(transformer::moe_shapes(folded.model, 1, layout).forward),
                   flops(transformer::moe_shapes(split.model, 1, split_layout).forward));
  // u = 1 needs no gather of the copies; u = 2 does.
  EXPECT_EQ(transformer::moe_tensor_collective_seconds(folded, 1).forward, 0);
  EXPECT_GT(transformer::moe_tensor_collective_seconds(split, 1).forward, 0);
  // Its ranks per node: e ranks u apart.
  EXPECT_EQ(transformer::expert_group_ranks_per_node(folded, 2), 8);
  EXPECT_EQ(transformer::expert_group_ranks_per_node(split, 2), 4);
}

TEST(MoeCosts, TheRoutedLoadScalesTheSlowestRanksExpertWorkAndActivations) {
  TransformerSetup balanced = moe_setup(8, 8);
  TransformerSetup skewed = balanced;
  skewed.model.moe.load_imbalance = 2;
  const StageCosts a = transformer_stage_costs(balanced, 1, 2)[0];
  const StageCosts b = transformer_stage_costs(skewed, 1, 2)[0];
  EXPECT_GT(b.forward_s, a.forward_s);
  EXPECT_GT(b.activation_bytes, a.activation_bytes);
  EXPECT_DOUBLE_EQ(a.model_flops, b.model_flops);  // MFU counts the work needed, not the wait
  EXPECT_DOUBLE_EQ(skewed.model.moe.routed_load(), 2);
  skewed.model.moe.capacity_factor = 1.25;
  EXPECT_DOUBLE_EQ(skewed.model.moe.routed_load(), 1.25);
  // Without expert parallelism a rank computes its own tokens' copies, however they spread over experts.
  TransformerSetup alone = moe_setup(8, 1);
  const double even = transformer_stage_costs(alone, 1, 2)[0].forward_s;
  alone.model.moe.load_imbalance = 2;
  EXPECT_DOUBLE_EQ(transformer_stage_costs(alone, 1, 2)[0].forward_s, even);
}

// DeepSeek's first dense layers: a stage holding only those has no experts.
TEST(MoeCosts, DenseFirstLayersHoldNoExperts) {
  TransformerSetup setup = moe_setup(8, 8);
  setup.model.moe.dense_layers = 2;
  const std::vector<StageCosts> stages = transformer_stage_costs(setup, 1, 2);
  EXPECT_EQ(stages[0].expert_parameters, 0);
  EXPECT_GT(stages[1].expert_parameters, 0);
  // The balanced split prices the same units.
  setup.split = LayerSplit::kBalanced;
  double experts = 0;
  for (const StageCosts& c : transformer_stage_costs(setup, 1, 2)) experts += c.expert_parameters;
  EXPECT_DOUBLE_EQ(experts, stages[1].expert_parameters);
}

// Every other layer a MoE (Llama 4's interleave_moe_layer_step 2, Qwen2-MoE's decoder_sparse_step): layers 1
// and 3 of 4, so each of two stages holds one; the parameter count has half the MoE layers.
TEST(MoeCosts, ALayerStepInterleavesDenseAndMoeLayers) {
  TransformerSetup setup = moe_setup(8, 8);
  setup.model.moe.layer_step = 2;
  EXPECT_FALSE(setup.model.moe_layer(0));
  EXPECT_TRUE(setup.model.moe_layer(1));
  EXPECT_EQ(setup.model.moe_layers(), 2);
  const std::vector<StageCosts> stages = transformer_stage_costs(setup, 1, 2);
  EXPECT_DOUBLE_EQ(stages[0].expert_parameters, stages[1].expert_parameters);
  EXPECT_DOUBLE_EQ(stages[0].expert_parameters, 8 / 8 * 3.0 * 1024 * 2048);
  TransformerSetup every = moe_setup(8, 8);
  EXPECT_NEAR(model_parameters(every.model) - model_parameters(setup.model),
              2 * (transformer::moe_mlp_parameters(every.model) - mlp_parameters(every.model)), 1);
  const ModelImport imported = read_hf_config(
      R"({"model_type": "qwen2_moe", "num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4,
          "vocab_size": 1000, "max_position_embeddings": 512, "num_experts": 8, "num_experts_per_tok": 2,
          "decoder_sparse_step": 2, "mlp_only_layers": [0]})",
      "qwen2-moe.json");
  EXPECT_EQ(imported.model.moe.layer_step, 2);
  EXPECT_TRUE(test::any_line_contains(imported.unsupported, "mlp_only_layers: [0]"));
}

// Over random mixtures and layouts (experts, top-k, dense first layers, a layer step, EP and expert tensor
// parallelism folded into t x d, even and balanced splits, 1 to 4 stages): every expert is held exactly once
// per replica (the stages' expert parameters times e x u are the MoE layers' experts), every time is finite
// and non-negative, and a heavier routed load never makes a stage faster.
TEST(MoeCosts, RandomLayoutsHoldEveryExpertOnceAndLoadNeverHelps) {
  std::mt19937 rng(20261207);
  const auto pick = [&](std::vector<int> from) { return from[rng() % from.size()]; };
  for (int trial = 0; trial < 60; ++trial) {
    const int experts = pick({4, 8, 16}), k = 1 + static_cast<int>(rng() % std::min(4, experts));
    const int tensor = pick({1, 2}), expert = pick({1, 2, 4}), expert_tensor = pick({1, tensor});
    const int data = expert * expert_tensor * pick({1, 2});
    const int layers = 4 + static_cast<int>(rng() % 5), stages = 1 + static_cast<int>(rng() % 4);
    const std::string yaml = fmt::format(
        "model: {{layers: {}, hidden: 256, heads: 4, seq_len: 128, vocab: 1000, mlp: swiglu,\n"
        "        moe: {{experts: {}, experts_per_token: {}, expert_ffn_hidden: 128, dense_layers: {},\n"
        "               layer_step: {}, shared_experts: {}}}}}\n"
        "hardware:\n  profile: h100-sxm5-80gb\n"
        "parallel: {{tensor: {}, data: {}, expert: {}, expert_tensor: {}, sequence_parallel: {}, zero: {}}}\n"
        "pipeline: {{stages: {}, microbatches: 4, layer_split: {}}}\n",
        layers, experts, k, rng() % 3, 1 + rng() % 2, rng() % 2, tensor, data, expert, expert_tensor,
        tensor > 1 ? "true" : "false", data > 1 ? pick({0, 1, 3}) : 0, stages,
        pick({0, 1}) ? "even" : "balanced");
    SCOPED_TRACE(yaml);
    const Scenario scenario = test::scenario_from_yaml(yaml);
    TransformerSetup setup = *scenario.transformer;
    const std::vector<StageCosts> costs = transformer_stage_costs(setup, 1, stages);
    double held = 0;
    for (const StageCosts& c : costs) {
      held += c.expert_parameters * expert * setup.parallel.expert_tensor_size();
      for (double v :
           {c.forward_s, c.backward_input_s, c.backward_weight_s, c.optimizer_s, c.activation_bytes}) {
        EXPECT_TRUE(std::isfinite(v) && v >= 0) << v;
      }
    }
    const double per_layer = experts * mlp_parameters(transformer::expert_model(setup.model));
    EXPECT_NEAR(held, setup.model.moe_layers() * per_layer, 1e-6 * per_layer);
    setup.model.moe.load_imbalance = 1.5;
    const std::vector<StageCosts> heavier = transformer_stage_costs(setup, 1, stages);
    if (setup.split != LayerSplit::kBalanced) {  // a balanced split may move its boundaries
      for (int i = 0; i < stages; ++i) EXPECT_GE(heavier[i].forward_s, costs[i].forward_s - 1e-15);
    }
  }
}

TEST(MoeCosts, ExpertParallelismIsCheckedAgainstTheModelAndTheJob) {
  const std::string job = "hardware: {profile: h100-sxm5-80gb}\npipeline: {stages: 2, microbatches: 4}\n";
  const std::string moe =
      "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 2048, vocab: 32000, mlp: swiglu,\n"
      "        moe: {experts: 8, experts_per_token: 2}}\n";
  EXPECT_NE(test::input_error_of([&] {
              test::scenario_from_yaml(moe + job + "parallel: {data: 6, expert: 3}\n");
            }).find("a divisor of model.moe.experts (8"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([&] {
              test::scenario_from_yaml(moe + job + "parallel: {data: 2, expert: 4}\n");
            }).find("e x expert_tensor (4 x 1) dividing a stage's tensor x context x data ranks (2)"),
            std::string::npos);
  const std::string dense = "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 2048, vocab: 32000}\n";
  EXPECT_NE(test::input_error_of([&] {
              test::scenario_from_yaml(dense + job + "parallel: {data: 2, expert: 2}\n");
            }).find("1 for a dense model"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([&] {
              test::scenario_from_yaml(
                  "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 2048, vocab: 32000,\n"
                  "        moe: {experts: 8, experts_per_token: 2, load_imbalance: 9}}\n" +
                  job);
            }).find("at most 8"),
            std::string::npos);
}

}  // namespace
}  // namespace pipesim
