// layer_split as a list: the layers of each (virtual) stage in model order, as Megatron's first/last-stage
// layer counts and layouts and torchtitan's stages with fewer layers place them. Each stage's costs follow
// its count; chunks may be uneven; a list that does not fit the run is an error that says why.
#include <gtest/gtest.h>

#include "api/stage_costs.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

Scenario uneven(const std::string& split, const std::string& schedules = "[1f1b-flush]") {
  return test::scenario_from_yaml(
      fmt::format("model: {{layers: 8, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000}}\n"
                  "hardware: {{profile: h100-sxm5-80gb}}\n"
                  "pipeline: {{stages: 4, microbatches: 8, layer_split: {}}}\n"
                  "schedules: {}\n",
                  split, schedules));
}

TEST(ExplicitLayerSplit, EachStageHoldsItsCountAndCostsInProportion) {
  const ResolvedStageCosts costs = resolve_stage_costs(uneven("[1, 3, 3, 1]"), 1, {});
  ASSERT_EQ(costs.rows.size(), 4u);
  EXPECT_EQ(costs.rows[0].layers, 1);
  EXPECT_EQ(costs.rows[1].layers, 3);
  EXPECT_EQ(costs.rows[2].layers, 3);
  EXPECT_EQ(costs.rows[3].layers, 1);
  // Middle stages hold only layers: three layers cost three times one (the first adds the embedding).
  const ResolvedStageCosts even = resolve_stage_costs(uneven("even"), 1, {});  // 2 layers each
  EXPECT_NEAR(costs.rows[1].forward_ms, 1.5 * even.rows[1].forward_ms, 1e-9 * even.rows[1].forward_ms + 1e-6);
  EXPECT_NEAR(costs.rows[1].activation_bytes, 1.5 * even.rows[1].activation_bytes, 1);
}

TEST(ExplicitLayerSplit, ChunksMayBeUnevenAndTheEndsMayHoldNoLayer) {
  // Megatron's layout "E|t|t|t|t|t|t|tt L"-like: the embedding alone in the first chunk.
  const Scenario s = uneven("[0, 1, 1, 1, 1, 1, 1, 2]", "[{name: interleaved-1f1b, chunks: 2}]");
  const ResolvedStageCosts costs = resolve_stage_costs(s, 1, {});
  ASSERT_EQ(costs.rows.size(), 8u);
  EXPECT_EQ(costs.rows.front().layers, 0);
  EXPECT_EQ(costs.rows.back().layers, 2);
  EXPECT_GT(costs.rows.front().forward_ms, 0);  // the embedding
  const SimulationResult r = simulate_schedule(s, s.schedules.at(0), {});
  EXPECT_GT(r.metrics.throughput_samples_per_s, 0);
}

TEST(ExplicitLayerSplit, AListThatDoesNotFitSaysWhy) {
  const auto error = [](const std::string& split, const std::string& schedules = "[1f1b-flush]") {
    const Scenario s = uneven(split, schedules);
    return test::input_error_of([&] { simulate_schedule(s, s.schedules.at(0), {}); });
  };
  EXPECT_NE(error("[2, 2, 4]").find("3 counts for 4 stages"), std::string::npos);
  EXPECT_NE(error("[2, 2, 2, 3]").find("9 layers in all, but the model has 8"), std::string::npos);
  EXPECT_NE(error("[4, 0, 2, 2]").find("stage 2 has 0 layers"), std::string::npos);
  EXPECT_NE(error("[2, 2, 2, 2]", "[zb-v]").find("4 counts for 8 stages"), std::string::npos);
  // The name alone is not a split: the list is.
  EXPECT_NE(test::input_error_of([] { uneven("explicit"); }).find("a list of layers per stage"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([] { uneven("[2, -1, 3, 4]"); }).find("pipeline.layer_split[1]"),
            std::string::npos);
}

}  // namespace
}  // namespace pipesim
