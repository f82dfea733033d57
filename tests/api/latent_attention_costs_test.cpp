// Multi-head latent attention (cost_models/transformer/latent_attention.h): DeepSeek-V3's parameter and
// active-parameter counts from its config, one layer's projections and FLOPs by hand, the tensor-parallel
// split (down projections whole on every rank, their work shared only with sequence parallelism), the
// activations it leaves for the backward, and the scenario key's checks.
#include <gtest/gtest.h>

#include "cost_models/transformer/latent_attention.h"
#include "cost_models/transformer/memory_bytes.h"
#include "cost_models/transformer/shapes_flops.h"
#include "cost_models/transformer/stage_costs.h"
#include "import/hf_config.h"
#include "import/megatron_args.h"
#include "tests/error_text.h"
#include "tests/scenario_text.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using transformer::attention_shapes;
using transformer::flops;

// DeepSeek-V3's config.json (the keys that shape it): 671 B parameters, 37 B active (the technical report;
// its multi-token prediction module is not among them).
const char* const kDeepSeekV3 = R"({"model_type": "deepseek_v3", "first_k_dense_replace": 3,
  "hidden_act": "silu", "hidden_size": 7168, "intermediate_size": 18432, "kv_lora_rank": 512,
  "max_position_embeddings": 163840, "moe_intermediate_size": 2048, "moe_layer_freq": 1,
  "n_routed_experts": 256, "n_shared_experts": 1, "num_attention_heads": 128, "num_experts_per_tok": 8,
  "num_hidden_layers": 61, "num_key_value_heads": 128, "q_lora_rank": 1536, "qk_nope_head_dim": 128,
  "qk_rope_head_dim": 64, "v_head_dim": 128, "tie_word_embeddings": false, "vocab_size": 129280,
  "rms_norm_eps": 1e-06})";

// DeepSeek-V2-Lite's: no query latent (queries projected from the hidden state), 15.7 B parameters, 2.4 B
// active without the input embedding (DeepSeek's model card).
const char* const kDeepSeekV2Lite = R"({"model_type": "deepseek_v2", "first_k_dense_replace": 1,
  "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 10944, "kv_lora_rank": 512,
  "moe_intermediate_size": 1408, "moe_layer_freq": 1, "n_routed_experts": 64, "n_shared_experts": 2,
  "num_attention_heads": 16, "num_experts_per_tok": 6, "num_hidden_layers": 27, "num_key_value_heads": 16,
  "q_lora_rank": null, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
  "tie_word_embeddings": false, "vocab_size": 102400, "max_position_embeddings": 163840})";

// One layer's projections, h = 7168: q down 7168 x 1536, q up 1536 x 128·192, kv down 7168 x (512 + 64),
// kv up 512 x 128·(128 + 128), the output 128·128 x 7168.
constexpr double kV3AttentionParameters =
    7168.0 * 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512.0 * 128 * 256 + 128.0 * 128 * 7168;

TEST(LatentAttentionCosts, DeepSeekV3HasItsPublishedParameterCounts) {
  const TransformerModel v3 = read_hf_config(kDeepSeekV3, "v3.json", 4096).model;
  ASSERT_TRUE(v3.mla.any());
  EXPECT_DOUBLE_EQ(attention_parameters(v3), kV3AttentionParameters);
  EXPECT_DOUBLE_EQ(kV3AttentionParameters, 187105280.0);
  // 61 attention halves, 3 dense SwiGLU MLPs of 18432, 58 MoE MLPs of 257 experts of 2048 and a router,
  // two untied 129280 x 7168 embeddings and the final norm.
  const double expert = 3.0 * 7168 * 2048, dense_mlp = 3.0 * 7168 * 18432, router = 7168.0 * 256;
  const double ends = 2.0 * 129280 * 7168 + 7168;
  EXPECT_DOUBLE_EQ(model_parameters(v3),
                   61 * kV3AttentionParameters + 3 * dense_mlp + 58 * (257 * expert + router) + ends);
  EXPECT_DOUBLE_EQ(active_parameters(v3),
                   61 * kV3AttentionParameters + 3 * dense_mlp + 58 * (9 * expert + router) + ends);
  EXPECT_NEAR(model_parameters(v3) / 1e9, 671, 0.5);
  EXPECT_NEAR(active_parameters(v3) / 1e9, 37, 0.6);
}

TEST(LatentAttentionCosts, DeepSeekV2LiteProjectsItsQueriesFromTheHiddenState) {
  const ModelImport imported = read_hf_config(kDeepSeekV2Lite, "v2-lite.json", 4096);
  const TransformerModel& lite = imported.model;
  EXPECT_EQ(lite.mla.q_lora_rank, 0);
  EXPECT_TRUE(imported.unknown.empty()) << imported.unknown.front();
  // q 2048 x 16·192, kv down 2048 x 576, kv up 512 x 16·256, the output 16·128 x 2048.
  EXPECT_DOUBLE_EQ(attention_parameters(lite),
                   2048.0 * 16 * 192 + 2048.0 * 576 + 512.0 * 16 * 256 + 16.0 * 128 * 2048);
  EXPECT_NEAR(model_parameters(lite) / 1e9, 15.7, 0.05);
  // DeepSeek's 2.4 B active leave out the input embedding (a lookup, no matmul): 2.66 B with it.
  EXPECT_NEAR((active_parameters(lite) - 102400.0 * 2048) / 1e9, 2.4, 0.06);
}

// A small latent attention worked by hand: h = 64, a = 4 heads of 8 + 4 rotary, values of 6, latents of 16
// (queries) and 12 (keys and values); s = 32 tokens, b = 1, no causal mask.
TransformerModel small_latent() {
  TransformerModel t;
  t.layers = 1;
  t.hidden = 64;
  t.heads = 4;
  t.seq_len = 32;
  t.vocab = 100;
  t.causal = false;
  t.mla.kv_lora_rank = 12;
  t.mla.q_lora_rank = 16;
  t.mla.qk_nope_head_dim = 8;
  t.mla.qk_rope_head_dim = 4;
  t.mla.v_head_dim = 6;
  return t;
}

TEST(LatentAttentionCosts, OneLayersGemmsAndFlopsByHand) {
  const TransformerModel t = small_latent();
  const double T = 32;
  // Projections: 64 x 16, 16 x 48, 64 x 16, 12 x 56, 24 x 64; the scores 32 x 32 x 12 and the context
  // 32 x 6 x 32 for each of 4 heads.
  const double projection_macs = 64 * 16 + 16 * 48 + 64 * 16 + 12 * 56 + 24 * 64;
  EXPECT_DOUBLE_EQ(attention_parameters(t), projection_macs);
  const double scores = 32.0 * 32 * 12 * 4, context = 32.0 * 6 * 32 * 4;
  const transformer::LayerShapes shapes = attention_shapes(t, 1);
  EXPECT_DOUBLE_EQ(flops(shapes.forward), 2 * (T * projection_macs + scores + context));
  // The backward: each projection's input gradient, the core's four products and flash's rerun scores;
  // the weight gradients are the projections again.
  EXPECT_DOUBLE_EQ(
      flops(shapes.backward_input),
      2 * (T * projection_macs + (32.0 * 32 * 6 + 32.0 * 6 * 32 + 2 * 32.0 * 12 * 32) * 4 + scores));
  EXPECT_DOUBLE_EQ(flops(shapes.backward_weight), 2 * T * projection_macs);
  EXPECT_DOUBLE_EQ(transformer::latent_key_value_width(t), 4 * (12 + 6));
}

// Megatron's tensor parallelism: the up projections split by columns and the output by rows over t, the
// down projections whole on every rank. Without sequence parallelism every rank repeats them over all
// tokens; with it each runs them over its T/t. MFU counts them once either way.
TEST(LatentAttentionCosts, TensorParallelRanksHoldTheDownProjectionsWhole) {
  const TransformerModel t = small_latent();
  const double down = 64 * 16 + 64 * 16, rest = 16 * 48 + 12 * 56 + 24 * 64;
  EXPECT_DOUBLE_EQ(attention_rank_parameters(t, 2), down + rest / 2);
  EXPECT_DOUBLE_EQ(attention_rank_parameters(t, 1), attention_parameters(t));
  const double repeated = flops(attention_shapes(t, 1, 2, false).forward);
  const double shared = flops(attention_shapes(t, 1, 2, true).forward);
  EXPECT_DOUBLE_EQ(repeated - shared, 2 * (32.0 / 2) * down);
  EXPECT_DOUBLE_EQ(2 * shared, flops(attention_shapes(t, 1).forward));
}

// What the half leaves for the backward, per token in 16-bit units: 4h, the latents 4·16 + 4·12 + 2·4,
// Q and K 2·a·12 each, V and the context 2·a·6 each, and flash attention's fp32 statistics 4 bytes a head.
TEST(LatentAttentionCosts, ActivationBytesByHand) {
  TransformerModel t = small_latent();
  const double per_token = 2 * (4 * 64 + 4 * 16 + 4 * 12 + 2 * 4 + 4 * 4 * 12 + 4 * 4 * 6) / 2.0 + 4 * 4;
  EXPECT_DOUBLE_EQ(transformer::attention_bytes(t, 1).stored, 32 * per_token);
  // Sequence parallelism splits the hidden state and the latents over the ranks, tensor parallelism the
  // heads' tensors.
  const double split =
      (4 * 64 + 4 * 16 + 4 * 12 + 2 * 4) / 2.0 + (4 * 4 * 12 + 4 * 4 * 6) / 2.0 + 4 * 4 / 2.0;
  EXPECT_DOUBLE_EQ(transformer::attention_bytes(t, 1, 2, true).stored, 32 * split);
  // Full recomputation keeps the layer's input alone.
  t.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(transformer::attention_bytes(t, 1).stored, 32 * 64 * 2.0);
}

// Latent attention costs less than the multi-head attention of the same heads it replaces (its keys and
// values come from a 576-wide latent), and a run prices it: stage costs from the scenario key.
TEST(LatentAttentionCosts, AScenarioPricesItAndChecksItsKeys) {
  const std::string base =
      "model: {layers: 4, hidden: 1024, heads: 8, seq_len: 2048, vocab: 32000, mlp: swiglu";
  const std::string tail = "hardware: {profile: h100-sxm5-80gb}\npipeline: {stages: 2, microbatches: 4}\n";
  const Scenario latent = test::scenario_from_yaml(
      base + ",\n        mla: {kv_lora_rank: 256, q_lora_rank: 384, qk_nope_head_dim: 128}}\n" + tail);
  const Scenario dense = test::scenario_from_yaml(base + ", head_dim: 192}\n" + tail);
  ASSERT_TRUE(latent.transformer->model.mla.any());
  EXPECT_EQ(latent.transformer->model.mla.qk_rope_head_dim, 64);  // Megatron's default
  const std::vector<StageCosts> a = transformer_stage_costs(*latent.transformer, 1, 2);
  const std::vector<StageCosts> b = transformer_stage_costs(*dense.transformer, 1, 2);
  EXPECT_LT(a[0].parameters, b[0].parameters);
  EXPECT_GT(a[0].forward_s, 0);
  // Shared key/value heads have no meaning here; an unknown key is named with what is expected.
  const std::string shared = test::input_error_of(
      [&] { test::scenario_from_yaml(base + ", kv_heads: 2, mla: {kv_lora_rank: 256}}\n" + tail); });
  EXPECT_NE(shared.find("model.kv_heads"), std::string::npos) << shared;
  const std::string unknown = test::input_error_of(
      [&] { test::scenario_from_yaml(base + ", mla: {kv_lora_rank: 256, rope_dim: 64}}\n" + tail); });
  EXPECT_NE(unknown.find("rope_dim"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("qk_rope_head_dim"), std::string::npos) << unknown;
}

TEST(LatentAttentionCosts, MegatronReadsItsSizes) {
  const MegatronImport imported = read_megatron_args({"--num-layers",
                                                      "4",
                                                      "--hidden-size",
                                                      "1024",
                                                      "--num-attention-heads",
                                                      "8",
                                                      "--seq-length",
                                                      "2048",
                                                      "--vocab-size",
                                                      "32000",
                                                      "--swiglu",
                                                      "--multi-latent-attention",
                                                      "--kv-lora-rank",
                                                      "256",
                                                      "--q-lora-rank",
                                                      "384",
                                                      "--qk-head-dim",
                                                      "96",
                                                      "--qk-pos-emb-head-dim",
                                                      "32",
                                                      "--v-head-dim",
                                                      "64"});
  const LatentAttention& mla = imported.imported.model.mla;
  EXPECT_EQ(mla.kv_lora_rank, 256);
  EXPECT_EQ(mla.q_lora_rank, 384);
  EXPECT_EQ(mla.qk_nope_head_dim, 96);
  EXPECT_EQ(mla.qk_rope_head_dim, 32);
  EXPECT_EQ(mla.v_head_dim, 64);
  EXPECT_TRUE(imported.imported.unknown.empty()) << imported.imported.unknown.front();
}

}  // namespace
}  // namespace pipesim
