// Op times from a traced run (import/trace_calibration.h): a trace written here whose forwards take twice and
// whose backwards take three times what the model predicts gives the factors 2 and 3, and a scenario scaled
// by them predicts the traced times.
#include "import/trace_calibration.h"

#include <gtest/gtest.h>

#include "cost_models/transformer/cost_model.h"
#include "tests/error_text.h"
#include "tests/scenario_text.h"

namespace pipesim {
namespace {

const char* const kTwoStages =
    "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000}\n"
    "hardware: {profile: h100-sxm5-80gb}\n"
    "pipeline: {stages: 2, microbatches: 4}\n";

// One merged trace: every stage's F and backward (B, or I and W) for 4 microbatches at the given durations.
std::string merged_trace(const std::vector<std::map<char, double>>& stage_us) {
  std::string events;
  double ts = 0;
  for (size_t stage = 0; stage < stage_us.size(); ++stage) {
    for (int mb = 0; mb < 4; ++mb) {
      for (const auto& [kind, us] : stage_us[stage]) {
        events +=
            fmt::format(R"({}{{"ph": "X", "name": "PP:{}{}{}", "pid": {}, "tid": 1, "ts": {}, "dur": {}}})",
                        events.empty() ? "" : ", ", stage, kind, mb, stage, ts, us);
        ts += us + 1;
      }
    }
  }
  return fmt::format(R"({{"traceEvents": [{}]}})", events);
}

TEST(TraceCalibration, FactorsAreTracedOverPredictedPerKind) {
  const Scenario s = test::scenario_from_yaml(kTwoStages);
  const TransformerCostModel model(*s.transformer, 1, PipelineLayout::linear(2));
  const auto us = [&](const Action& a) { return static_cast<double>(model.duration(a)) / 1e3; };
  TracedActions whole;
  read_pytorch_trace(merged_trace({{{'F', 2 * us(forward(0, 0))}, {'B', 3 * us(backward(0, 0))}},
                                   {{'F', 2 * us(forward(1, 0))}, {'B', 3 * us(backward(1, 0))}}}),
                     "whole.json", whole);
  const OpTimeScale scale = op_time_scale_from_trace(s, whole, "whole.json");
  EXPECT_NEAR(scale.forward, 2, 1e-6);
  EXPECT_NEAR(scale.backward_input, 3, 1e-6);
  EXPECT_NEAR(scale.backward_weight, 3, 1e-6);
  EXPECT_NE(scale.source.find("whole.json: 2 stages"), std::string::npos) << scale.source;
  // Scaled, the model predicts the traced times (the host overhead per op scales with its op here).
  TransformerSetup scaled = *s.transformer;
  scaled.profile.op_time_scale = scale;
  const TransformerCostModel calibrated(scaled, 1, PipelineLayout::linear(2));
  EXPECT_NEAR(static_cast<double>(calibrated.duration(forward(1, 0))),
              2.0 * static_cast<double>(model.duration(forward(1, 0))), 2e-3 * model.duration(forward(1, 0)));
  // Split backwards give I and W their own factors.
  TracedActions split;
  read_pytorch_trace(merged_trace({{{'F', us(forward(0, 0))},
                                    {'I', 1.5 * us(backward_input(0, 0))},
                                    {'W', 0.5 * us(backward_weight(0, 0))}},
                                   {{'F', us(forward(1, 0))},
                                    {'I', 1.5 * us(backward_input(1, 0))},
                                    {'W', 0.5 * us(backward_weight(1, 0))}}}),
                     "split.json", split);
  const OpTimeScale split_scale = op_time_scale_from_trace(s, split, "split.json");
  EXPECT_NEAR(split_scale.forward, 1, 1e-6);
  EXPECT_NEAR(split_scale.backward_input, 1.5, 1e-6);
  EXPECT_NEAR(split_scale.backward_weight, 0.5, 1e-6);
}

TEST(TraceCalibration, TracesThatCannotCalibrateSayWhy) {
  const Scenario s = test::scenario_from_yaml(kTwoStages);
  TracedActions forwards_only;
  read_pytorch_trace(merged_trace({{{'F', 100}}, {{'F', 100}}}), "f.json", forwards_only);
  EXPECT_NE(test::input_error_of([&] {
              op_time_scale_from_trace(s, forwards_only, "f.json");
            }).find("stage 0 has no traced backward (B, or I and W)"),
            std::string::npos);
  TracedActions nothing;
  EXPECT_NE(test::input_error_of([&] {
              op_time_scale_from_trace(s, nothing, "empty.json");
            }).find("no pipelining action"),
            std::string::npos);
  // A scenario states the factors with their source, or is refused.
  const Scenario scaled = test::scenario_from_yaml(
      std::string(kTwoStages)
          .replace(std::string(kTwoStages).find("hardware: {profile: h100-sxm5-80gb}"), 35,
                   "hardware: {profile: h100-sxm5-80gb, op_time_scale: {forward: 2, "
                   "source: traced}}"));
  EXPECT_EQ(scaled.transformer->profile.op_time_scale.forward, 2);
  EXPECT_EQ(scaled.transformer->profile.op_time_scale.backward_input, 1);
  EXPECT_NE(test::input_error_of([&] {
              test::scenario_from_yaml(
                  "model: {layers: 4, hidden: 1024, heads: 16, seq_len: 1024, vocab: 32000}\n"
                  "hardware: {profile: h100-sxm5-80gb, op_time_scale: {forward: 2}}\n"
                  "pipeline: {stages: 2, microbatches: 4}\n");
            }).find("hardware.op_time_scale.source"),
            std::string::npos);
}

}  // namespace
}  // namespace pipesim
