// FP8 training (cost_models/transformer/fp8_gemms.h): the layers' weight GEMMs at the profile's FP8 grid, the
// output layer and the attention core in bf16, each cast's bytes by hand, the FP8 weight copies and the
// step's cast, and the scenario's and importers' keys.
#include <gtest/gtest.h>

#include "cost_models/transformer/device.h"
#include "cost_models/transformer/fp8_gemms.h"
#include "cost_models/transformer/shapes_flops.h"
#include "cost_models/transformer/stage_costs.h"
#include "cost_models/transformer/units.h"
#include "import/megatron_args.h"
#include "import/torchtitan_config.h"
#include "tests/error_text.h"
#include "tests/scenario_text.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using transformer::Device;
using transformer::Gemm;

TransformerSetup setup_with(const std::string& fp8, const std::string& more = "") {
  const std::string yaml = fmt::format(
      "model: {{layers: 4, hidden: 2048, heads: 16, seq_len: 2048, vocab: 32000, mlp: swiglu{}{}}}\n"
      "hardware: {{profile: h100-sxm5-80gb}}\n"
      "pipeline: {{stages: 2, microbatches: 4}}\n",
      fp8.empty() ? "" : ", fp8: " + fp8, more);
  return *test::scenario_from_yaml(yaml).transformer;
}

// A cast reads the bf16 operand (2 bytes an element) and writes its two FP8 copies (1 + 1); current scaling
// reads it once more for the amax. The attention core's products are not cast.
TEST(Fp8Costs, ACastsBytesByHand) {
  EXPECT_EQ(transformer::fp8_cast_bytes_per_element(Fp8Recipe::kDelayed), 4);
  EXPECT_EQ(transformer::fp8_cast_bytes_per_element(Fp8Recipe::kBlockwise), 4);
  EXPECT_EQ(transformer::fp8_cast_bytes_per_element(Fp8Recipe::kTensorwise), 6);
  EXPECT_EQ(transformer::fp8_cast_bytes_per_element(Fp8Recipe::kNone), 0);
  const TransformerSetup s = setup_with("tensorwise");
  const Device d(s);
  const std::vector<Gemm> gemms = {{1000, 512, 64}, {128, 128, 64, 8, 0.5, true}};
  EXPECT_DOUBLE_EQ(transformer::fp8_cast_seconds(s.model, d, gemms),
                   1000.0 * 64 * 6 / d.bandwidth / d.elementwise_efficiency + d.launch);
  const TransformerSetup none = setup_with("");
  EXPECT_EQ(transformer::fp8_cast_seconds(none.model, Device(none), gemms), 0);
}

// The layers' weight GEMMs run on the profile's FP8 grid; the output layer and flash attention's rate keep
// bf16's, so the output layer costs the same with or without FP8.
TEST(Fp8Costs, OnlyTheLayersWeightGemmsRunInFp8) {
  const TransformerSetup fp8 = setup_with("delayed"), bf16 = setup_with("");
  const Device d8(fp8), d16(bf16);
  EXPECT_EQ(d8.forward.dtype(), "fp8");
  EXPECT_EQ(d8.dtype_forward.dtype(), "bf16");
  EXPECT_DOUBLE_EQ(d8.forward.tflops_at(8192, 8192, 8192),
                   fp8.profile.fp8_gemm.speedup_over_bf16 * d16.forward.tflops_at(8192, 8192, 8192));
  EXPECT_DOUBLE_EQ(d8.attention_flops_per_s, d16.attention_flops_per_s);
  const UnitCosts out8 = transformer::output_unit(fp8, d8, 1), out16 = transformer::output_unit(bf16, d16, 1);
  EXPECT_DOUBLE_EQ(out8.forward_s, out16.forward_s);
  EXPECT_DOUBLE_EQ(out8.backward_weight_s, out16.backward_weight_s);
  // A stage's ops are faster, its FLOPs the same.
  const std::vector<StageCosts> a = transformer_stage_costs(fp8, 1, 2),
                                b = transformer_stage_costs(bf16, 1, 2);
  EXPECT_LT(a[0].forward_s, b[0].forward_s);
  EXPECT_LT(a[0].backward_weight_s, b[0].backward_weight_s);
  EXPECT_DOUBLE_EQ(a[0].model_flops, b[0].model_flops);
  // The last stage too: its output layer costs the same, its layers less.
  EXPECT_LT(a[1].forward_s, b[1].forward_s);
}

// Two FP8 copies of each layer weight (2 bytes a weight), cast once a step (4 bytes a weight at the
// optimizer's bandwidth); the embedding and the output layer keep theirs in bf16 alone.
TEST(Fp8Costs, TheWeightsFp8CopiesAndTheirCast) {
  const TransformerSetup fp8 = setup_with("delayed"), bf16 = setup_with("");
  const std::vector<StageCosts> a = transformer_stage_costs(fp8, 1, 2),
                                b = transformer_stage_costs(bf16, 1, 2);
  const double layer = layer_parameters(bf16.model), matrices = 2 * layer;  // two layers a stage
  EXPECT_DOUBLE_EQ(a[0].parameter_bytes - b[0].parameter_bytes, 2 * matrices);
  EXPECT_DOUBLE_EQ(a[1].parameter_bytes - b[1].parameter_bytes, 2 * matrices);
  const Device d(fp8);
  EXPECT_NEAR(a[0].optimizer_s - b[0].optimizer_s, 4 * matrices / d.optimizer_bandwidth, 1e-12);
}

TEST(Fp8Costs, TheKeyIsCheckedAndTheImportersReadTheRecipe) {
  const std::string eager = test::input_error_of([] { setup_with("delayed", ", attention: eager"); });
  EXPECT_NE(eager.find("flash attention"), std::string::npos) << eager;
  const std::string unknown = test::input_error_of([] { setup_with("blockwize"); });
  EXPECT_NE(unknown.find("blockwise"), std::string::npos) << unknown;
  const std::string a100 = test::input_error_of([] {
    TransformerSetup s = setup_with("delayed");
    s.profile = test::scenario_from_yaml(
                    "model: {layers: 2, hidden: 256, heads: 4, seq_len: 128, vocab: 100}\n"
                    "hardware: {profile: a100-sxm4-80gb}\npipeline: {stages: 2, microbatches: 2}\n")
                    .transformer->profile;
    transformer_stage_costs(s, 1, 2);
  });
  EXPECT_NE(a100.find("has no FP8 GEMM rate"), std::string::npos) << a100;
  const MegatronImport megatron = read_megatron_args(
      {"--num-layers", "4", "--hidden-size", "1024", "--num-attention-heads", "8", "--seq-length", "2048",
       "--vocab-size", "32000", "--fp8-format", "e4m3", "--fp8-recipe", "blockwise"});
  EXPECT_EQ(megatron.imported.model.fp8, Fp8Recipe::kBlockwise);
  const TorchtitanImport titan = read_torchtitan_config(
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\nconverters = [\"float8\"]\n[float8]\nrecipe_name = "
      "\"rowwise\"\n[training]\nseq_len = 4096\n",
      "job.toml");
  EXPECT_EQ(titan.imported.model.fp8, Fp8Recipe::kRowwise);
  EXPECT_TRUE(titan.imported.unknown.empty()) << titan.imported.unknown.front();
}

}  // namespace
}  // namespace pipesim
