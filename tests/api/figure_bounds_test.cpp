// Figures that would break physics are refused where they start, never printed: an optimizer state that
// overflows the byte counts (it printed a peak of 0 B and "fits yes"), a byte count the model computes beyond
// what int64 sums hold.
#include <gtest/gtest.h>

#include "api/resolve.h"
#include "base/value_ranges.h"
#include "report/table_columns.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

const char* const kModel =
    "model: {layers: 4, hidden: 256, heads: 4, seq_len: 512, vocab: 1000}\n"
    "hardware: {profile: h100-sxm5-80gb}\npipeline: {stages: 2, microbatches: 4}\n";

TEST(FigureBounds, AnOptimizerStateBeyondAnyOptimizerIsRefusedAtItsLine) {
  const std::string error = test::input_error_of([] {
    test::scenario_from_yaml(std::string(kModel) +
                             "optimizer: {type: adamw, state_bytes_per_param: 1099511627776}\n");
  });
  EXPECT_NE(error.find("test.yaml:4: key 'optimizer.state_bytes_per_param'"), std::string::npos) << error;
  EXPECT_NE(error.find("at most 1024"), std::string::npos) << error;
  // The largest allowed value still gives a peak above the weights, and a verdict that it does not fit.
  const Scenario big = test::scenario_from_yaml(std::string(kModel) +
                                                "optimizer: {type: adamw, state_bytes_per_param: 1024}\n");
  const SimulationResult r = test::run_schedule(big, "1f1b-flush");
  EXPECT_GT(r.memory.peak_bytes(), 0);
}

TEST(FigureBounds, ComputedBytesBeyondInt64SumsAreAnError) {
  EXPECT_EQ(computed_bytes(12.4, "x"), 12);
  EXPECT_NE(test::input_error_of([] { computed_bytes(1e19, "a stage's weights"); }).find("a stage's weights"),
            std::string::npos);
  EXPECT_NE(test::input_error_of([] { computed_bytes(std::nan(""), "w"); }), "no error");
  EXPECT_NE(test::input_error_of([] { computed_bytes(-1, "w"); }), "no error");
}

// A microbatch holds whole samples: B = 10 over m = 4 is 3, 3, 2, 2 (torch.tensor_split), each op priced at
// its own size; the table says "4x2-3", not "4x2.5".
TEST(FigureBounds, UnevenMicrobatchesHoldWholeSamplesAndArePricedAtTheirSize) {
  const std::string base =
      "model: {layers: 4, hidden: 256, heads: 4, seq_len: 512, vocab: 1000}\n"
      "hardware: {profile: h100-sxm5-80gb}\n";
  const Scenario uneven =
      test::scenario_from_yaml(base + "pipeline: {stages: 2, microbatches: 4, global_batch: 10}\n");
  const UnevenSplit split = uneven_split(uneven);
  EXPECT_EQ(split.smaller, 2);
  EXPECT_EQ(split.larger_count, 2);
  EXPECT_EQ(microbatch_size_text(uneven), "2-3");
  const ResolvedRun run = resolve(uneven, {"1f1b-flush", ScheduleParams(test::kTestSource)});
  const ResolvedRun three =
      resolve(test::scenario_from_yaml(base + "pipeline: {stages: 2, microbatches: 4, microbatch_size: 3}\n"),
              {"1f1b-flush", ScheduleParams(test::kTestSource)});
  const ResolvedRun two =
      resolve(test::scenario_from_yaml(base + "pipeline: {stages: 2, microbatches: 4, microbatch_size: 2}\n"),
              {"1f1b-flush", ScheduleParams(test::kTestSource)});
  for (int microbatch : {0, 1, 4, 5}) {
    EXPECT_EQ(run.costs->duration(forward(1, microbatch)), three.costs->duration(forward(1, microbatch)));
  }
  for (int microbatch : {2, 3, 6, 7}) {
    EXPECT_EQ(run.costs->duration(backward(0, microbatch)), two.costs->duration(backward(0, microbatch)));
  }
  EXPECT_LT(two.costs->duration(forward(0, 0)), three.costs->duration(forward(0, 0)));
  // Memory per microbatch is the larger one's: an upper bound.
  EXPECT_EQ(run.costs->activation_bytes(0), three.costs->activation_bytes(0));
  const SimulationResult r = test::run_schedule(uneven, "1f1b-flush");
  EXPECT_EQ(r.microbatch_size_text, "2-3");
  EXPECT_NE(render_result_table("s", {r}, {}).find("4x2-3"), std::string::npos);
  // Throughput counts the batch's 10 samples.
  EXPECT_NEAR(r.metrics.throughput_samples_per_s * ns_to_s(r.metrics.period_ns), 10 * 1.0, 1e-6);
}

}  // namespace
}  // namespace pipesim
