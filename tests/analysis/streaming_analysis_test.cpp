// The streaming analysis (analysis/streaming_analysis.h) fed ops and gradients by hand: the figures it
// keeps while a run goes, without a run or a trace. Its agreement with the recorded run's analyses over
// whole runs is the api's (tests/api/streaming_analysis_test.cpp: SimulationOptions::keep_trace).
#include "analysis/streaming_analysis.h"

#include <gtest/gtest.h>

namespace pipesim {
namespace {

// Staleness of gradients that wait for a step: one step can apply gradients of the same forward version
// from inside and outside the window, which the window's mean must keep apart. One stage: F0 F1 F2 read
// version 0, B0 ends before step 0 (staleness 0); B1 and B2 end after it and F3 reads version 1; step 1
// applies B1 (1 - 0, outside the window [2, 4)), B2 (1 - 0, inside) and B3 (1 - 1, inside): mean 0.5.
TEST(StreamingAnalysis, KeepsTheWindowApartAmongGradientsOneStepApplies) {
  StreamingConfig config;
  config.layout = PipelineLayout::linear(1);
  config.microbatches_per_batch = 4;
  config.window = {1, 2, 4};
  config.total_microbatches = 4;
  config.static_memory.resize(1);
  StreamingAnalysis analysis(config);
  const auto op = [&](Action action, int version, TimeNs start_ns) {
    analysis.op_started({action, 0, version, start_ns, start_ns + 1});
  };
  const auto gradient = [&](int microbatch, int forward_version, int gradient_version, TimeNs end_ns) {
    analysis.gradient_complete({0, microbatch, forward_version, gradient_version, end_ns});
  };
  op(forward(0, 0), 0, 0);
  op(forward(0, 1), 0, 1);
  op(forward(0, 2), 0, 2);
  op(backward(0, 0), 0, 3);
  gradient(0, 0, 0, 4);
  op(optimizer_step(0, 0, false), 0, 4);
  op(backward(0, 1), 1, 5);
  gradient(1, 0, 1, 6);
  op(backward(0, 2), 1, 6);
  gradient(2, 0, 1, 7);
  op(forward(0, 3), 1, 7);
  op(backward(0, 3), 1, 8);
  gradient(3, 1, 1, 9);
  op(optimizer_step(0, 1, false), 1, 9);
  analysis.run_finished(10);
  RunTrace summary;
  summary.stage_peak_in_flight = {3};
  const DriftReport report = analysis.drift({2, 4}, summary);
  ASSERT_EQ(report.stages.size(), 1u);
  EXPECT_EQ(report.stages[0].staleness_max, 1);
  EXPECT_DOUBLE_EQ(report.stages[0].staleness_mean, 0.5);
  EXPECT_DOUBLE_EQ(report.stages[0].drift_mean, 0.5);  // B2 read version 1, F2 version 0; B3 read what F3 did
}

}  // namespace
}  // namespace pipesim
