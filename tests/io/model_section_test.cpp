// The scenario's `model:` section (io/model_section.h): keys read into TransformerModel, and bad values
// refused with the file, line and key.
#include <gtest/gtest.h>

#include "tests/error_text.h"
#include "tests/scenario_text.h"

namespace pipesim {
namespace {

const std::string kHardwareAndPipeline =
    "hardware: {profile: a100-sxm4-80gb}\npipeline: {stages: 2, microbatches: 2}\n";

TEST(ModelSection, ReadsTheNormAndDefaultsToLayerNorm) {
  const std::string model = "model: {layers: 8, hidden: 512, heads: 8, seq_len: 256, vocab: 1000";
  EXPECT_EQ(test::scenario_from_yaml(model + "}\n" + kHardwareAndPipeline).transformer->model.norm,
            NormKind::kLayerNorm);
  EXPECT_EQ(
      test::scenario_from_yaml(model + ", norm: rmsnorm}\n" + kHardwareAndPipeline).transformer->model.norm,
      NormKind::kRmsNorm);
  EXPECT_EQ(
      test::scenario_from_yaml(model + ", norm: layernorm}\n" + kHardwareAndPipeline).transformer->model.norm,
      NormKind::kLayerNorm);
}

TEST(ModelSection, AnUnknownNormNamesTheLineTheKeyAndTheChoices) {
  const std::string error = test::input_error_of([] {
    parse_scenario(
        "model:\n  layers: 8\n  hidden: 512\n  heads: 8\n  seq_len: 256\n  vocab: 1000\n"
        "  norm: rmsnrom\n" +
            kHardwareAndPipeline,
        "s.yaml");
  });
  EXPECT_NE(error.find("s.yaml:7: key 'model.norm'"), std::string::npos) << error;
  EXPECT_NE(error.find("layernorm"), std::string::npos) << error;
  EXPECT_NE(error.find("did you mean 'rmsnorm'"), std::string::npos) << error;
}

// Another memory on the same chip: the memory-bound kernels and the optimizer step follow it.
TEST(ModelSection, HardwareMayStateTheMemoryBandwidth) {
  const std::string model = "model: {layers: 8, hidden: 512, heads: 8, seq_len: 256, vocab: 1000}\n";
  const std::string pipeline = "pipeline: {stages: 2, microbatches: 2}\n";
  const HardwareProfile p =
      test::scenario_from_yaml(
          model + "hardware: {profile: a100-sxm4-80gb, memory_bandwidth_gb_per_s: 1000}\n" + pipeline)
          .transformer->profile;
  EXPECT_EQ(p.memory_bandwidth_gb_per_s, 1000);
  EXPECT_EQ(p.elementwise_bandwidth_gb_per_s(), 1000);
  const std::string error = test::input_error_of([&] {
    parse_scenario(model + "hardware: {profile: a100-sxm4-80gb, memory_bandwidth_gb_per_s: 0}\n" + pipeline,
                   "s.yaml");
  });
  EXPECT_NE(error.find("s.yaml:2: key 'hardware.memory_bandwidth_gb_per_s'"), std::string::npos) << error;
}

// torchtitan's op-level policy is its own recompute kind, named in the model's choices.
TEST(ModelSection, ReadsOpLevelRecomputation) {
  const Scenario s = test::scenario_from_yaml(
      "model: {layers: 8, hidden: 512, heads: 8, seq_len: 256, vocab: 1000, recompute: op}\n" +
      kHardwareAndPipeline);
  EXPECT_EQ(s.transformer->model.recompute, Recompute::kOp);
}

}  // namespace
}  // namespace pipesim
