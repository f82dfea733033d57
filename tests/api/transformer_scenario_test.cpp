// Transformer scenarios: model:/hardware: instead of costs:, layer_split, optimizer type, global_batch and an
// entry's own pipeline: — read correctly, and every mistake named by file, line and key.
#include <gtest/gtest.h>

#include "api/simulation.h"
#include "base/errors.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

const std::string kModel =
    "model: {layers: 8, hidden: 512, heads: 8, seq_len: 256, vocab: 1000}\n"
    "hardware: {profile: a100-sxm4-80gb}\n";

std::string scenario_error_of(const std::string& yaml) {
  return test::input_error_of([&] { parse_scenario(yaml, "s.yaml"); });
}

TEST(TransformerScenario, ReadsTheModelAndTakesTheLinkFromTheProfile) {
  const Scenario s =
      parse_scenario(kModel +
                         "pipeline: {stages: 4, microbatches: 8, microbatch_size: 2, layer_split: zb}\n"
                         "optimizer: {type: muon, state_bytes_per_param: 6}\n",
                     "s.yaml");
  ASSERT_TRUE(s.transformer.has_value());
  EXPECT_EQ(s.transformer->model.hidden, 512);
  EXPECT_EQ(s.transformer->split, LayerSplit::kZeroBubble);
  EXPECT_EQ(s.transformer->optimizer.type, OptimizerKind::kMuon);
  EXPECT_EQ(s.transformer->optimizer.state_bytes_per_param, 6);
  EXPECT_EQ(s.seq_len, 256);
  EXPECT_TRUE(s.backward_split_given);
  EXPECT_EQ(s.comm.model, CommSpec::Model::kLink);
  EXPECT_EQ(s.comm.bandwidth_bytes_per_ns, 80);                // the A100 profile's link: 80 GB/s
  EXPECT_EQ(s.comm.latency_ns, std::vector<TimeNs>{250'000});  // and 250 us
}

TEST(TransformerScenario, SoapTakesItsPreconditioningFrequencyAndNoOtherOptimizerDoes) {
  const Scenario s = parse_scenario(kModel +
                                        "pipeline: {stages: 4, microbatches: 8}\n"
                                        "optimizer: {type: soap, precondition_frequency: 25}\n",
                                    "s.yaml");
  ASSERT_TRUE(s.transformer.has_value());
  EXPECT_EQ(s.transformer->optimizer.type, OptimizerKind::kSoap);
  EXPECT_EQ(s.transformer->optimizer.precondition_frequency, 25);
  const std::string error = scenario_error_of(kModel +
                                              "pipeline: {stages: 4, microbatches: 8}\n"
                                              "optimizer: {type: adamw, precondition_frequency: 25}\n");
  EXPECT_NE(error.find("optimizer.precondition_frequency"), std::string::npos) << error;
  EXPECT_NE(error.find("soap only"), std::string::npos) << error;
}

TEST(TransformerScenario, GlobalBatchGivesAMeanMicrobatchSize) {
  const Scenario s =
      parse_scenario(kModel + "pipeline: {stages: 4, microbatches: 24, global_batch: 128}\n", "s.yaml");
  EXPECT_DOUBLE_EQ(s.samples_per_microbatch(), 128.0 / 24);
  const SimulationResult r = simulate_schedule(s, {"1f1b-flush", ScheduleParams("t")}, SimulationOptions{});
  EXPECT_DOUBLE_EQ(r.microbatch_size, 128.0 / 24);
  // 128 samples per batch: throughput = 128 / period.
  EXPECT_NEAR(r.metrics.throughput_samples_per_s, 128 / ns_to_s(r.metrics.period_ns), 1e-9);
}

TEST(TransformerScenario, AnEntryMayFixItsOwnPipelineShape) {
  const Scenario s = parse_scenario(kModel +
                                        "pipeline: {stages: 4, microbatches: 8, global_batch: 64}\n"
                                        "schedules:\n"
                                        "  - {name: paci, accumulation: 4, pipeline: {microbatches: 4}}\n"
                                        "  - {name: 1f1b-flush, pipeline: {microbatch_size: 3}}\n",
                                    "s.yaml");
  const Scenario paci = scenario_for(s, s.schedules[0]);
  EXPECT_EQ(paci.microbatches, 4);
  EXPECT_DOUBLE_EQ(paci.samples_per_microbatch(), 16);
  EXPECT_EQ(pipeline_label(paci, s.schedules[0]), " [B=64 m=4 b=16]");
  const Scenario flush = scenario_for(s, s.schedules[1]);
  EXPECT_EQ(flush.global_batch, 0);
  EXPECT_DOUBLE_EQ(flush.samples_per_microbatch(), 3);
  EXPECT_EQ(pipeline_label(flush, s.schedules[1]), " [m=8 b=3]");
  const SimulationResult r = simulate_schedule(s, s.schedules[0], SimulationOptions{});
  EXPECT_EQ(r.label, "paci(accumulation=4) [B=64 m=4 b=16]");
  EXPECT_EQ(r.spec.microbatches, 4);
}

TEST(TransformerScenario, MistakesNameFileLineAndKey) {
  EXPECT_EQ(scenario_error_of(
                kModel + "costs: {forward_ms: 1, backward_ms: 2}\npipeline: {stages: 2, microbatches: 2}\n"),
            "s.yaml:1: key 'model': expected either costs: or model: (with hardware:), not both, got "
            "{layers: 8, hidden: 512, heads: 8, seq_len: 256, vocab: 1000}");
  EXPECT_EQ(
      scenario_error_of(
          "pipeline: {stages: 2, microbatches: 2, layer_split: zb}\ncosts: {forward_ms: 1, backward_ms: "
          "2}\n"),
      "s.yaml:1: key 'pipeline.layer_split': expected nothing here: it applies to transformer scenarios "
      "(model: and hardware: instead of costs:), got 'zb'");
  EXPECT_EQ(
      scenario_error_of(kModel + "pipeline: {stages: 2, microbatches: 2, layer_split: odd}\n"),
      "s.yaml:3: key 'pipeline.layer_split': expected 'even', 'zb' (first and last stage one layer fewer), "
      "'balanced' (min-max split of the attention and MLP halves, embedding, final norm and output layer by "
      "predicted time) or a list of layers per stage ([3, 4, 4, 3]; devices x chunks of them in model "
      "order), "
      "got 'odd'");
  EXPECT_EQ(
      scenario_error_of("model: {layers: 8, hidden: 512, heads: 7, seq_len: 256, vocab: 1000}\n"
                        "hardware: {profile: a100-sxm4-80gb}\npipeline: {stages: 2, microbatches: 2}\n"),
      "s.yaml:1: key 'model.heads': expected a divisor of model.hidden (or give model.head_dim, each head's "
      "width), got '7'");
  EXPECT_EQ(
      scenario_error_of("model: {layers: 8, hidden: 512, heads: 8, seq_len: 256}\n"
                        "hardware: {profile: a100-sxm4-80gb}\npipeline: {stages: 2, microbatches: 2}\n"),
      "s.yaml:1: key 'model.vocab': expected a value (layers, hidden, heads, seq_len, vocab), got "
      "{layers: 8, hidden: 512, heads: 8, seq_len: 256}");
  EXPECT_EQ(
      scenario_error_of(kModel + "pipeline: {stages: 2, microbatches: 2}\noptimizer: {type: adafactor}\n"),
      "s.yaml:4: key 'optimizer.type': expected adamw, sgd, nadam, muon, lion, adan or soap, got "
      "'adafactor'");
  EXPECT_EQ(
      scenario_error_of(kModel +
                        "pipeline: {stages: 2, microbatches: 4, microbatch_size: 2, global_batch: 8}\n"),
      "s.yaml:3: key 'pipeline.global_batch': expected either global_batch or microbatch_size, not both, got "
      "'8'");
  EXPECT_EQ(scenario_error_of(kModel + "pipeline: {stages: 2, microbatches: 4, global_batch: 3}\n"),
            "s.yaml:3: key 'pipeline.global_batch': expected an integer >= 4, got '3'");
  EXPECT_EQ(scenario_error_of(kModel + "pipeline: {stages: 2, microbatches: 4}\n"
                                       "schedules: [{name: gpipe, pipeline: {stages: 3}}]\n"),
            "s.yaml:4: key 'schedules[0].pipeline.stages': unknown key; allowed here: microbatches, "
            "microbatch_size, global_batch, layer_split");
  const std::string missing_profile = scenario_error_of(
      "model: {layers: 8, hidden: 512, heads: 8, seq_len: 256, vocab: 1000}\nhardware: {profile: tpu-v9}\n"
      "pipeline: {stages: 2, microbatches: 2}\n");
  EXPECT_EQ(
      missing_profile.rfind("s.yaml:2: key 'hardware.profile': hardware profile 'tpu-v9': no such file", 0),
      0u)
      << missing_profile;
  EXPECT_EQ(
      scenario_error_of("model: {layers: 8, hidden: 512, heads: 8, seq_len: 256, vocab: 1000, dtype: fp32}\n"
                        "hardware: {profile: cpu-vm}\npipeline: {stages: 2, microbatches: 2}\n"),
      "no error");
  const std::string no_dtype = scenario_error_of(
      "model: {layers: 8, hidden: 512, heads: 8, seq_len: 256, vocab: 1000}\nhardware: {profile: cpu-vm}\n"
      "pipeline: {stages: 2, microbatches: 2}\n");
  EXPECT_NE(no_dtype.find("has no GEMM measurements for dtype 'bf16' (it has: fp32)"), std::string::npos)
      << no_dtype;
}

TEST(TransformerScenario, AGlobalBatchSmallerThanAnEntrysMicrobatchesIsAnError) {
  const Scenario s = parse_scenario(kModel +
                                        "pipeline: {stages: 2, microbatches: 2, global_batch: 4}\n"
                                        "schedules: [{name: gpipe, pipeline: {microbatches: 8}}]\n",
                                    "s.yaml");
  try {
    scenario_for(s, s.schedules[0]);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("global batch 4 is smaller than the 8 microbatches"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace pipesim
