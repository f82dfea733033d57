// Nothing priced as a dense stand-in without a word (api/unmodelled_check.h): a model with a sliding window
// in force or FP8 GEMMs is read whole from every importer, refused by the run naming
// its key and line, and with --allow-unmodelled run with every header and JSON record listing what the
// figures leave out. Experts (model.moe), latent attention (model.mla), multi-token prediction
// (model.mtp_layers) and a head size of the model's own are modelled, not flagged.
#include <gtest/gtest.h>

#include "api/unmodelled_check.h"
#include "import/hf_config.h"
#include "import/import_scenario.h"
#include "import/megatron_args.h"
#include "import/torchtitan_config.h"
#include "report/result_record.h"
#include "report/table_columns.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

// Qwen3-30B-A3B's config.json as published (the keys that shape the model).
const char* const kQwen3Moe = R"({
  "architectures": ["Qwen3MoeForCausalLM"], "model_type": "qwen3_moe", "decoder_sparse_step": 1,
  "head_dim": 128, "hidden_act": "silu", "hidden_size": 2048, "intermediate_size": 6144,
  "max_position_embeddings": 40960, "max_window_layers": 48, "mlp_only_layers": [],
  "moe_intermediate_size": 768, "norm_topk_prob": true, "num_attention_heads": 32, "num_experts": 128,
  "num_experts_per_tok": 8, "num_hidden_layers": 48, "num_key_value_heads": 4, "output_router_logits": false,
  "rms_norm_eps": 1e-06, "rope_theta": 1000000.0, "router_aux_loss_coef": 0.001, "sliding_window": null,
  "tie_word_embeddings": false, "torch_dtype": "bfloat16", "use_sliding_window": false, "vocab_size": 151936
})";

// DeepSeek-V3's shape keys: routed and shared experts after three dense layers, latent attention, one MTP
// module, an FP8 checkpoint.
const char* const kDeepSeekV3 = R"({
  "model_type": "deepseek_v3", "first_k_dense_replace": 3, "hidden_act": "silu", "hidden_size": 7168,
  "intermediate_size": 18432, "kv_lora_rank": 512, "max_position_embeddings": 163840,
  "moe_intermediate_size": 2048, "moe_layer_freq": 1, "n_routed_experts": 256, "n_shared_experts": 1,
  "num_attention_heads": 128, "num_experts_per_tok": 8, "num_hidden_layers": 61, "num_key_value_heads": 128,
  "num_nextn_predict_layers": 1, "q_lora_rank": 1536, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
  "v_head_dim": 128, "tie_word_embeddings": false, "vocab_size": 129280,
  "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8"}
})";

Scenario imported_scenario(const ModelImport& imported) {
  ImportSettings settings;
  settings.name = "imported";
  settings.stages = 4;
  settings.origin = "test";
  return parse_scenario(scenario_from_import(imported, settings), "imported.yaml");
}

TEST(UnmodelledFeatures, Qwen3MoeIsReadWithItsExpertsAndHeadSize) {
  const ModelImport imported = read_hf_config(kQwen3Moe, "config.json", 4096);
  const TransformerModel& m = imported.model;
  EXPECT_EQ(m.head_dim, 128);  // 32 x 128 = 4096 query width against hidden 2048
  EXPECT_EQ(m.moe.experts, 128);
  EXPECT_EQ(m.moe.experts_per_token, 8);
  EXPECT_EQ(m.moe.expert_ffn_hidden, 768);
  EXPECT_EQ(m.unmodelled.sliding_window, 0);  // sliding_window null, use_sliding_window false
  EXPECT_TRUE(imported.unknown.empty()) << imported.unknown.front();
  EXPECT_TRUE(imported.unsupported.empty()) << imported.unsupported.front();
  EXPECT_TRUE(test::any_line_contains(imported.ignored, "router_aux_loss_coef"));
  // The scenario keeps them and reads back with them.
  const Scenario s = imported_scenario(imported);
  EXPECT_EQ(s.transformer->model.head_dim, 128);
  EXPECT_EQ(s.transformer->model.moe.experts, 128);
}

// Qwen3-30B-A3B with a sliding window turned on: the experts are modelled, the window is not.
std::string windowed_qwen3_moe() {
  std::string text = kQwen3Moe;
  const std::string off = R"("sliding_window": null)", on = R"("sliding_window": 1024)";
  text.replace(text.find(off), off.size(), on);
  const std::string unused = R"("use_sliding_window": false)", used = R"("use_sliding_window": true)";
  text.replace(text.find(unused), unused.size(), used);
  return text;
}

// The experts run as they are; the refusal names the file, the line and the key of what is not modelled.
TEST(UnmodelledFeatures, ExpertsRunAndAWindowInForceIsRefusedNamingTheLine) {
  const Scenario moe = imported_scenario(read_hf_config(kQwen3Moe, "config.json", 4096));
  EXPECT_TRUE(unmodelled_features(moe).empty());
  EXPECT_NO_THROW(require_modelled(moe));
  const Scenario s = imported_scenario(read_hf_config(windowed_qwen3_moe(), "config.json", 4096));
  const std::string error = test::input_error_of([&] { require_modelled(s); });
  EXPECT_NE(error.find("imported.yaml:"), std::string::npos) << error;
  EXPECT_NE(error.find("key 'model.sliding_window': sliding-window attention (1024 of the 4096 tokens)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("--allow-unmodelled"), std::string::npos) << error;
  // Every path to a priced run refuses it: resolve() is where run, sweep, costs, export and plan pass.
  EXPECT_NE(test::input_error_of([&] { test::run_schedule(s, "1f1b-flush"); }).find("model.sliding_window"),
            std::string::npos);
}

TEST(UnmodelledFeatures, AllowedRunsCarryTheListInTheHeaderAndTheJson) {
  Scenario s = imported_scenario(read_hf_config(windowed_qwen3_moe(), "config.json", 4096));
  s.allow_unmodelled = true;
  const SimulationResult r = test::run_schedule(s, "1f1b-flush");
  ASSERT_EQ(r.unmodelled.size(), 1u);
  EXPECT_NE(r.unmodelled[0].find("model.sliding_window: sliding-window attention"), std::string::npos);
  EXPECT_NE(r.unmodelled[0].find("priced as attention over the whole sequence"), std::string::npos);
  const std::string table = render_result_table("imported", {r}, {});
  EXPECT_NE(table.find("UNMODELLED (--allow-unmodelled)"), std::string::npos) << table;
  const nlohmann::ordered_json record = result_record(r, {});
  ASSERT_TRUE(record.contains("unmodelled"));
  EXPECT_EQ(record["unmodelled"].size(), 1u);
  EXPECT_EQ(record["profile_kind"], "published");
  // A dense model carries no list at all.
  const SimulationResult dense =
      test::run_schedule(imported_scenario(read_hf_config(
                             R"({"num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4,
                                           "vocab_size": 1000, "max_position_embeddings": 512})",
                             "dense.json")),
                         "1f1b-flush");
  EXPECT_TRUE(dense.unmodelled.empty());
  EXPECT_FALSE(result_record(dense, {}).contains("unmodelled"));
}

TEST(UnmodelledFeatures, DeepSeekV3HasExpertsLatentAttentionAndMtpAndRuns) {
  const ModelImport imported = read_hf_config(kDeepSeekV3, "config.json", 4096);
  EXPECT_EQ(imported.model.moe.experts, 256);
  EXPECT_EQ(imported.model.moe.shared_experts, 1);
  EXPECT_EQ(imported.model.moe.dense_layers, 3);
  const LatentAttention& mla = imported.model.mla;
  EXPECT_EQ(mla.kv_lora_rank, 512);
  EXPECT_EQ(mla.q_lora_rank, 1536);
  EXPECT_EQ(mla.qk_nope_head_dim, 128);
  EXPECT_EQ(mla.qk_rope_head_dim, 64);
  EXPECT_EQ(mla.v_head_dim, 128);
  EXPECT_EQ(imported.model.mtp_layers, 1);
  // The checkpoint's FP8 storage is said, not taken for FP8 training.
  EXPECT_EQ(imported.model.fp8, Fp8Recipe::kNone);
  EXPECT_TRUE(test::any_line_contains(imported.assumed, "quantization_config"));
  const Scenario s = imported_scenario(imported);
  // The experts, the latent attention and the MTP module are modelled: nothing is refused.
  EXPECT_TRUE(unmodelled_features(s).empty());
  EXPECT_EQ(s.transformer->model.mla.q_lora_rank, 1536);  // the scenario keeps them
  EXPECT_EQ(s.transformer->model.mtp_layers, 1);
  EXPECT_NO_THROW(require_modelled(s));
}

// A window is in force only where it is shorter than the sequence, and not at all where the file turns it
// off (Qwen2's use_sliding_window: false).
TEST(UnmodelledFeatures, ASlidingWindowCountsOnlyWhereItIsInForce) {
  const std::string base = R"("num_hidden_layers": 4, "hidden_size": 256, "num_attention_heads": 4,
                              "vocab_size": 1000, "max_position_embeddings": 32768, "sliding_window": 4096)";
  const ModelImport on = read_hf_config("{" + base + "}", "on.json", 8192);
  EXPECT_EQ(on.model.unmodelled.sliding_window, 4096);
  EXPECT_EQ(unmodelled_in_force(on.model.unmodelled, 8192).size(), 1u);
  EXPECT_TRUE(unmodelled_in_force(on.model.unmodelled, 4096).empty());  // the window spans the sequence
  const ModelImport off = read_hf_config("{" + base + R"(, "use_sliding_window": false})", "off.json", 8192);
  EXPECT_EQ(off.model.unmodelled.sliding_window, 0);
  EXPECT_TRUE(test::any_line_contains(off.ignored, "use_sliding_window: false"));
}

TEST(UnmodelledFeatures, MegatronExpertsFp8AndKvChannels) {
  const MegatronImport imported = read_megatron_args({"--num-layers",
                                                      "32",
                                                      "--hidden-size",
                                                      "4096",
                                                      "--num-attention-heads",
                                                      "32",
                                                      "--seq-length",
                                                      "4096",
                                                      "--vocab-size",
                                                      "32000",
                                                      "--swiglu",
                                                      "--num-experts",
                                                      "8",
                                                      "--moe-router-topk",
                                                      "2",
                                                      "--moe-ffn-hidden-size",
                                                      "14336",
                                                      "--fp8-format",
                                                      "hybrid",
                                                      "--kv-channels",
                                                      "96",
                                                      "--mtp-num-layers",
                                                      "1",
                                                      "--expert-model-parallel-size",
                                                      "2",
                                                      "--expert-tensor-parallel-size",
                                                      "1",
                                                      "--moe-token-dispatcher-type",
                                                      "flex",
                                                      "--moe-enable-deepep"});
  const TransformerModel& m = imported.imported.model;
  EXPECT_EQ(m.moe.experts, 8);
  EXPECT_EQ(m.moe.experts_per_token, 2);
  EXPECT_EQ(m.moe.expert_ffn_hidden, 14336);
  EXPECT_EQ(m.fp8, Fp8Recipe::kDelayed);  // Megatron's default recipe under --fp8-format hybrid
  EXPECT_EQ(m.mtp_layers, 1);
  EXPECT_EQ(m.head_dim, 96);
  EXPECT_FALSE(test::any_line_contains(imported.imported.unknown, "fp8"));
  // The experts' parallelism is the job's.
  const ParallelConfig& p = imported.imported.parallel;
  EXPECT_EQ(p.expert, 2);
  EXPECT_EQ(p.expert_tensor, 1);
  EXPECT_TRUE(p.deepep_dispatch);
  EXPECT_TRUE(test::any_line_contains(imported.imported.read, "parallel.expert_dispatch: deepep"));
}

TEST(UnmodelledFeatures, TorchtitanFloat8ConverterIsFp8) {
  const TorchtitanImport imported = read_torchtitan_config(
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\nconverters = [\"float8\"]\n[training]\nseq_len = 4096\n",
      "job.toml");
  EXPECT_EQ(imported.imported.model.fp8, Fp8Recipe::kTensorwise);  // torchtitan's default recipe
  EXPECT_FALSE(test::any_line_contains(imported.imported.unknown, "converters"));
}

// The scenario's own keys: read, located, checked.
TEST(UnmodelledFeatures, ScenarioKeysAreCheckedAndLocated) {
  const std::string model =
      "model: {layers: 4, hidden: 256, heads: 4, seq_len: 512, vocab: 1000, mlp: swiglu, ";
  const std::string rest = "}\nhardware: {profile: h100-sxm5-80gb}\npipeline: {stages: 2, microbatches: 4}\n";
  const Scenario s = test::scenario_from_yaml(model + "attention_chunk: 256, sliding_window: 128" + rest);
  const std::vector<UnmodelledFeature> f = unmodelled_features(s);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].key, "model.sliding_window");
  EXPECT_EQ(f[0].where, "test.yaml:1: key 'model.sliding_window'");
  EXPECT_EQ(f[1].key, "model.attention_chunk");
  EXPECT_NE(test::input_error_of([&] {
              test::scenario_from_yaml(model + "moe: {experts: 8}" + rest);
            }).find("model.moe"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([&] {
              test::scenario_from_yaml(model + "moe: {experts: 8, experts_per_token: 9}" + rest);
            }).find("at most 8"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([&] {
              test::scenario_from_yaml(model + "moe: {experts: 8, experts_per_tok: 2}" + rest);
            }).find("experts_per_token"),
            std::string::npos);
}

}  // namespace
}  // namespace pipesim
