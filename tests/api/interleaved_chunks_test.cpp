// Interleaved 1F1B as Megatron runs it: every chunk holds the same number of layers (with layer_split: zb the
// embedding and the loss count as one layer each), the Zero Bubble paper's models run with one layer per
// chunk, and a chunk count that cannot split the layers equally is an input error naming the key.
#include <gtest/gtest.h>

#include "api/zb_model_scenario.h"
#include "cost_models/chunk_layers.h"
#include "cost_models/transformer/layer_split.h"
#include "io/zb_reference.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

// zb_models.csv: (layers, N) = (22, 8), (30, 8), (46, 16), (62, 32). One layer per chunk, counting the
// embedding and the loss as layers: v = (layers + 2) / N = 24/8, 32/8, 48/16, 64/32.
TEST(InterleavedChunks, ZeroBubbleModelsGetOneLayerPerChunk) {
  const std::map<std::string, int> expected = {{"1.5B", 3}, {"6.2B", 4}, {"14.6B", 3}, {"28.3B", 2}};
  const std::vector<ZbModel> models = load_zb_models(default_reference_data_dir());
  ASSERT_EQ(models.size(), expected.size());
  for (const ZbModel& m : models) {
    SCOPED_TRACE(m.name);
    const int v = one_layer_chunks(m.model.layers, m.stages, LayerSplit::kZeroBubble);
    EXPECT_EQ(v, expected.at(m.name));
    // Over N*v virtual stages the first holds only the embedding, the last only the output layer and loss,
    // every other one transformer layer.
    const std::vector<int> layers = split_layers(m.model.layers, m.stages * v, LayerSplit::kZeroBubble);
    std::vector<int> one_each(m.stages * v, 1);
    one_each.front() = one_each.back() = 0;
    EXPECT_EQ(layers, one_each);
    EXPECT_NO_THROW(check_equal_chunk_layers(m.model.layers, LayerSplit::kZeroBubble,
                                             PipelineLayout::interleaved(m.stages, v)));
  }
}

std::string chunk_error(const std::string& split, int layers, int chunks) {
  const Scenario s = test::scenario_from_yaml(
      fmt::format("model: {{layers: {}, hidden: 256, heads: 4, seq_len: 128, vocab: 1000}}\n"
                  "hardware: {{profile: a100-sxm4-80gb}}\n"
                  "pipeline: {{stages: 4, microbatches: 8, layer_split: {}}}\n"
                  "schedules: [{{name: interleaved-1f1b, chunks: {}}}]\n",
                  layers, split, chunks));
  return test::input_error_of([&] { simulate_schedule(s, s.schedules.at(0), {}); });
}

TEST(InterleavedChunks, UnequalChunksAreAnInputErrorNamingTheKey) {
  // zb: 10 layers + 2 = 12 slots; 4 devices x 2 chunks = 8 does not divide 12, 4 x 3 = 12 does.
  const std::string zb = chunk_error("zb", 10, 2);
  EXPECT_EQ(
      zb.rfind("test.yaml:4: key 'schedules[0]': chunks=2: 10 layers (12 with the embedding and the loss, "
               "layer_split: zb) do not split equally over 4 devices x 2 chunks",
               0),
      0u)
      << zb;
  EXPECT_NE(zb.find("chunks that do: 1, 3"), std::string::npos) << zb;
  EXPECT_EQ(chunk_error("zb", 10, 3), "no error");
  // even: 12 layers; 8 does not divide 12, 12 does.
  const std::string even = chunk_error("even", 12, 2);
  EXPECT_NE(even.find("chunks=2: 12 layers do not split equally over 4 devices x 2 chunks"),
            std::string::npos)
      << even;
  EXPECT_NE(even.find("chunks that do: 1, 3"), std::string::npos) << even;
  EXPECT_EQ(chunk_error("even", 12, 3), "no error");
  EXPECT_EQ(chunk_error("even", 16, 2), "no error");
  // balanced cuts layers in halves: never equal chunks, whatever the counts.
  EXPECT_NE(chunk_error("balanced", 12, 3).find("chunks=3: layer_split balanced gives chunks unequal parts"),
            std::string::npos);
  EXPECT_EQ(chunk_error("balanced", 12, 1), "no error");
}

TEST(InterleavedChunks, AnEntryMaySetItsOwnLayerSplit) {
  const Scenario s = test::scenario_from_yaml(
      "model: {layers: 12, hidden: 256, heads: 4, seq_len: 128, vocab: 1000}\n"
      "hardware: {profile: a100-sxm4-80gb}\n"
      "pipeline: {stages: 4, microbatches: 8, layer_split: balanced}\n"
      "schedules: [{name: interleaved-1f1b, chunks: 3, pipeline: {layer_split: even}}, 1f1b-flush]\n");
  const SimulationResult interleaved = simulate_schedule(s, s.schedules.at(0), {});
  EXPECT_EQ(interleaved.label, "interleaved-1f1b(chunks=3) [m=8 b=1 split=even]");
  // The override reaches the cost model: even over 12 chunks is one layer each, so every chunk but the first
  // (embedding) and the last (output layer) costs the same.
  const Scenario even = scenario_for(s, s.schedules.at(0));
  ASSERT_TRUE(even.transformer);
  EXPECT_EQ(even.transformer->split, LayerSplit::kEven);
  EXPECT_EQ(scenario_for(s, s.schedules.at(1)).transformer->split, LayerSplit::kBalanced);
  const std::string explicit_costs = test::input_error_of([] {
    test::scenario_from_yaml(
        "pipeline: {stages: 2, microbatches: 2}\ncosts: {forward_ms: 1, backward_ms: 1}\n"
        "schedules: [{name: gpipe, pipeline: {layer_split: even}}]\n");
  });
  EXPECT_EQ(explicit_costs, "no error");  // parsed; the error comes when the entry runs
  const Scenario plain = test::scenario_from_yaml(
      "pipeline: {stages: 2, microbatches: 2}\ncosts: {forward_ms: 1, backward_ms: 1}\n"
      "schedules: [{name: gpipe, pipeline: {layer_split: even}}]\n");
  EXPECT_NE(test::input_error_of([&] {
              simulate_schedule(plain, plain.schedules.at(0), {});
            }).find("pipeline.layer_split needs a transformer scenario"),
            std::string::npos);
}

// With chunks of (2, 1) layers 1F1B-I was slower than 1F1B on the 14.6B model at m=128. With one layer per
// chunk it is not, with transfers overlapping compute (its bubble shrinks with v) and with blocking ones too
// (there its 3x as many transfers eat part of that gain).
TEST(InterleavedChunks, OneLayerChunksAreNoSlowerThanOneFOneBOn14B) {
  const std::vector<ZbModel> models = load_zb_models(default_reference_data_dir());
  Scenario s = zb_model_scenario(find_zb_model(models, "14.6B"), 128, "a100-sxm4-80gb", 2);
  for (bool blocking : {false, true}) {
    SCOPED_TRACE(blocking ? "blocking" : "overlapped");
    s.comm.blocking = blocking;
    const SimulationResult flush =
        simulate_schedule(s, {"1f1b-flush", ScheduleParams("t")}, SimulationOptions{});
    ScheduleRequest interleaved{"interleaved-1f1b", ScheduleParams("t")};
    interleaved.params.set("chunks", "3");
    const SimulationResult chunked = simulate_schedule(s, interleaved, SimulationOptions{});
    EXPECT_GE(chunked.metrics.throughput_samples_per_gpu_s, flush.metrics.throughput_samples_per_gpu_s);
    EXPECT_LT(chunked.metrics.bubble_fraction, flush.metrics.bubble_fraction);
  }
}

}  // namespace
}  // namespace pipesim
