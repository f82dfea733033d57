// `pipesim import hf` (import/hf_config.h, import/import_scenario.h): real configs written out here, read
// into the model they describe, every key accounted for, and a scenario that reads back as the same model.
#include <gtest/gtest.h>

#include <algorithm>

#include "import/hf_config.h"
#include "import/import_scenario.h"
#include "io/scenario.h"
#include "tests/error_text.h"

namespace pipesim {
namespace {

// Meta-Llama-3-8B's config.json as published (plus one key of our own).
const char* const kLlama3_8B = R"({
  "architectures": ["LlamaForCausalLM"],
  "attention_bias": false,
  "attention_dropout": 0.0,
  "bos_token_id": 128000,
  "eos_token_id": 128001,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 8192,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "rope_theta": 500000.0,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.40.0.dev0",
  "use_cache": true,
  "vocab_size": 128256,
  "our_own_key": 7
})";

// GPT-2 (124M) as published: GPT-2's key names, no n_inner, dropout, tied embeddings by default.
const char* const kGpt2 = R"({
  "activation_function": "gelu_new",
  "architectures": ["GPT2LMHeadModel"],
  "attn_pdrop": 0.1,
  "bos_token_id": 50256,
  "embd_pdrop": 0.1,
  "eos_token_id": 50256,
  "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05,
  "model_type": "gpt2",
  "n_ctx": 1024,
  "n_embd": 768,
  "n_head": 12,
  "n_inner": null,
  "n_layer": 12,
  "n_positions": 1024,
  "resid_pdrop": 0.1,
  "summary_type": "cls_index",
  "vocab_size": 50257
})";

TEST(ImportHf, Llama3IsAGroupedQueryModelWithAGatedMlp) {
  const ModelImport imported = read_hf_config(kLlama3_8B, "config.json");
  const TransformerModel& m = imported.model;
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.ffn_hidden, 14336);
  EXPECT_EQ(m.mlp, MlpKind::kSwiglu);
  EXPECT_EQ(m.vocab, 128256);
  EXPECT_EQ(m.seq_len, 4096);  // no --seq-len: pipesim's stated default, below the 8,192-token context
  EXPECT_TRUE(test::any_line_contains(imported.assumed, "no --seq-len: seq_len 4096"));
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.dropout);
  EXPECT_EQ(m.dtype, "bf16");
  EXPECT_EQ(imported.model_type, "llama");
  EXPECT_EQ(imported.architecture, "LlamaForCausalLM");
  EXPECT_TRUE(test::any_line_contains(imported.ignored, "rope_theta"));
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);
  EXPECT_TRUE(test::any_line_contains(imported.read, "rms_norm_eps -> norm: rmsnorm"));
  EXPECT_EQ(imported.unknown, std::vector<std::string>{"our_own_key"});
  EXPECT_TRUE(imported.unsupported.empty());
  EXPECT_TRUE(test::any_line_contains(imported.assumed, "longest context"));
}

TEST(ImportHf, Gpt2KeysNoInnerWidthAndDropout) {
  const ModelImport imported = read_hf_config(kGpt2, "config.json", 512);
  const TransformerModel& m = imported.model;
  EXPECT_EQ(m.layers, 12);
  EXPECT_EQ(m.hidden, 768);
  EXPECT_EQ(m.heads, 12);
  EXPECT_EQ(m.kv_heads, 0);
  EXPECT_EQ(m.mlp, MlpKind::kGelu);
  EXPECT_EQ(m.ffn_hidden, 0);  // 4h
  EXPECT_EQ(m.ffn(), 4 * 768);
  EXPECT_EQ(m.seq_len, 512);       // --seq-len over n_positions
  EXPECT_TRUE(m.tied_embeddings);  // Hugging Face's default
  EXPECT_TRUE(m.dropout);
  EXPECT_TRUE(test::any_line_contains(imported.assumed, "tied, Hugging Face's default"));
  EXPECT_TRUE(test::any_line_contains(imported.assumed, "4 x hidden"));
  EXPECT_EQ(m.norm, NormKind::kLayerNorm);
  EXPECT_TRUE(test::any_line_contains(imported.read, "layer_norm_epsilon -> norm: layernorm"));
  EXPECT_TRUE(imported.unknown.empty()) << imported.unknown.front();
}

// Experts and a head size of their own are read into the model (model.moe, spec/mixture_of_experts.h); a
// window the file leaves null is nothing.
TEST(ImportHf, ExpertsAndHeadDimAreReadNotDropped) {
  const ModelImport moe = read_hf_config(
      R"({"model_type": "mixtral", "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
          "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
          "max_position_embeddings": 32768, "num_local_experts": 8, "num_experts_per_tok": 2,
          "sliding_window": null, "head_dim": 64, "vision_config": {"depth": 2}})",
      "mixtral.json");
  EXPECT_EQ(moe.model.moe.experts, 8);
  EXPECT_EQ(moe.model.moe.experts_per_token, 2);
  EXPECT_EQ(moe.model.head_dim, 64);
  EXPECT_EQ(moe.model.unmodelled.sliding_window, 0);
  EXPECT_TRUE(test::any_line_contains(moe.read, "experts: 8 routed, 2 per token -> model.moe"));
  EXPECT_TRUE(test::any_line_contains(moe.unsupported, "vision_config"));
  EXPECT_FALSE(test::any_line_contains(moe.unsupported, "sliding_window"));
}

TEST(ImportHf, BadFilesNameTheLineTheKeyAndWhatWasExpected) {
  EXPECT_NE(test::input_error_of([] {
              read_hf_config("{\n  \"hidden_size\": 4096,\n  oops\n}", "c.json");
            }).find("c.json:3:3: not JSON"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([] {
              read_hf_config(R"({"num_hidden_layers": 2})", "c.json");
            }).find("no 'hidden_size' or 'n_embd' or 'd_model' (the model's hidden)"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([] {
              read_hf_config(R"({"num_hidden_layers": 2, "hidden_size": "4096"})", "c.json");
            }).find("key 'hidden_size': expected a positive integer (the model's hidden), got \"4096\""),
            std::string::npos);
  EXPECT_NE(test::input_error_of([] {
              read_hf_config(R"({"num_hidden_layers": 2, "hidden_size": 100, "num_attention_heads": 3,
                                 "vocab_size": 10, "max_position_embeddings": 8})",
                             "c.json");
            }).find("3 heads do not divide the hidden size 100 and there is no head_dim"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([] { read_hf_config("[1, 2]", "c.json"); }).find("expected a JSON object"),
            std::string::npos);
  // A number beyond a double was nlohmann's out_of_range, which ended the process (the fuzz campaign).
  EXPECT_NE(test::input_error_of([] {
              read_hf_config(R"({"rms_norm_eps": 1e520})", "c.json");
            }).find("c.json: not a config.json: number overflow parsing '1e520'"),
            std::string::npos);
  // 100,000 levels deep overflowed the stack when the value was shown in an error.
  const std::string deep =
      "{\"num_hidden_layers\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_NE(
      test::input_error_of([&] { read_hf_config(deep, "c.json"); }).find("nested more than 256 levels deep"),
      std::string::npos);
}

// The written scenario reads back as the imported model, with the settings' pipeline, and says what it
// assumed.
TEST(ImportHf, TheScenarioReadsBackAsTheModel) {
  const ModelImport imported = read_hf_config(kLlama3_8B, "config.json", 4096);
  ImportSettings settings;
  settings.name = "llama-3-8b";
  settings.stages = 8;
  settings.microbatches = 16;
  settings.global_batch = 64;
  settings.origin = "pipesim import hf config.json --seq-len 4096";
  const std::string text = scenario_from_import(imported, settings);
  const Scenario s = parse_scenario(text, "llama.yaml");
  ASSERT_TRUE(s.transformer.has_value());
  const TransformerModel& m = s.transformer->model;
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.ffn_hidden, 14336);
  EXPECT_EQ(m.mlp, MlpKind::kSwiglu);
  EXPECT_EQ(m.seq_len, 4096);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_EQ(m.norm, NormKind::kRmsNorm);  // written as model.norm, read back
  EXPECT_NE(text.find("  norm: rmsnorm\n"), std::string::npos) << text;
  EXPECT_EQ(s.stages, 8);
  EXPECT_EQ(s.microbatches, 16);
  EXPECT_EQ(s.global_batch, 64);
  EXPECT_NE(text.find("#   num_key_value_heads: 8 -> kv_heads"), std::string::npos) << text;
  EXPECT_NE(text.find("# Unknown to pipesim, not read:\n#   our_own_key"), std::string::npos) << text;
  EXPECT_NE(text.find("the importer's choices"), std::string::npos) << text;
  settings.stages = 33;
  EXPECT_NE(test::input_error_of([&] {
              scenario_from_import(imported, settings);
            }).find("33 pipeline stages for 32 layers"),
            std::string::npos);
}

}  // namespace
}  // namespace pipesim
