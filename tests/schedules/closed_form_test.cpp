// Closed forms with uniform stages and no comm (docs/design.md §4-§5): the flush bubbles, interleaving's
// reduction by the number of chunks, and the in-flight peaks.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/schedules/schedule_runs.h"

namespace pipesim {
namespace {

constexpr double kForwardMs = 1.0;
constexpr double kBackwardMs = 2.0;

struct Shape {
  int stages;
  int microbatches;
};

std::vector<Shape> grid() {
  std::vector<Shape> shapes;
  for (int n : {1, 2, 3, 4, 8, 16}) {
    for (int m : {1, 2, 4, 8, 16, 33}) shapes.push_back({n, m});
  }
  return shapes;
}

// Two batches of a schedule with uniform stages (per device: F = 1 ms, B = 2 ms, split over its chunks).
RunTrace run_uniform(const Shape& s, const std::string& schedule, int chunks = 0) {
  const double per_chunk = 1.0 / std::max(chunks, 1);
  std::map<std::string, std::string> params;
  if (chunks > 0) params["chunks"] = std::to_string(chunks);
  return test::run_schedule_plan(schedule, s.stages, s.microbatches, /*batches=*/2,
                                 test::UniformStageCosts::ms(kForwardMs * per_chunk, kBackwardMs * per_chunk),
                                 params);
}

// Runs a flush schedule on one shape and checks what GPipe and 1F1B-flush share: one batch takes
// (m+N-1)(F+B), the barrier keeps batches apart, so the bubble is (N-1)/(m+N-1).
RunTrace run_flush(const Shape& s, const std::string& schedule) {
  const RunTrace trace = run_uniform(s, schedule);
  EXPECT_NEAR(test::whole_run_bubble(trace),
              static_cast<double>(s.stages - 1) / (s.microbatches + s.stages - 1), 1e-9);
  EXPECT_EQ(trace.makespan_ns, 2 * ms_to_ns((s.microbatches + s.stages - 1) * (kForwardMs + kBackwardMs)));
  return trace;
}

TEST(ClosedForm, GPipeBubbleAndPeakInFlight) {
  for (const Shape& s : grid()) {
    SCOPED_TRACE(fmt::format("N={} m={}", s.stages, s.microbatches));
    const RunTrace trace = run_flush(s, "gpipe");
    // Every forward of the batch runs before any backward: m activations on every device.
    for (int d = 0; d < s.stages; ++d) EXPECT_EQ(trace.peak_in_flight[d], s.microbatches) << d;
  }
}

TEST(ClosedForm, OneFOneBFlushBubbleAndPeakInFlight) {
  for (const Shape& s : grid()) {
    SCOPED_TRACE(fmt::format("N={} m={}", s.stages, s.microbatches));
    const RunTrace trace = run_flush(s, "1f1b-flush");
    // Stage i (1-based) holds its N-i warm-up forwards plus the one in progress: N-i+1, or m if fewer.
    for (int i = 1; i <= s.stages; ++i) {
      EXPECT_EQ(trace.peak_in_flight[i - 1], std::min(s.stages - i + 1, s.microbatches)) << "stage " << i;
    }
  }
}

// Megatron's virtual pipeline: with v chunks per device the flush bubble time is (N-1)(F+B)/v, so the
// bubble fraction is (N-1)/(v*m + N-1). Holds for m a multiple of N.
TEST(ClosedForm, InterleavedBubbleShrinksByChunks) {
  for (const Shape& s :
       std::vector<Shape>{{2, 2}, {2, 4}, {3, 6}, {4, 4}, {4, 8}, {4, 12}, {8, 8}, {8, 16}}) {
    double previous = 1.0;
    for (int v : {1, 2, 4}) {
      SCOPED_TRACE(fmt::format("N={} m={} chunks={}", s.stages, s.microbatches, v));
      const RunTrace trace = run_uniform(s, "interleaved-1f1b", v);
      const double f_plus_b = kForwardMs + kBackwardMs;
      EXPECT_EQ(trace.makespan_ns, 2 * ms_to_ns(s.microbatches * f_plus_b + (s.stages - 1) * f_plus_b / v));
      const double bubble = test::whole_run_bubble(trace);
      EXPECT_NEAR(bubble, static_cast<double>(s.stages - 1) / (v * s.microbatches + s.stages - 1), 1e-9);
      EXPECT_LT(bubble, previous);
      previous = bubble;
    }
  }
}

// With one chunk the interleaved schedule is exactly 1F1B-flush, op for op.
TEST(ClosedForm, InterleavedWithOneChunkIsOneFOneB) {
  const RunTrace interleaved = test::run_schedule_plan(
      "interleaved-1f1b", 4, 8, 2, test::UniformStageCosts::ms(kForwardMs, kBackwardMs), {{"chunks", "1"}});
  const RunTrace flush = run_uniform({4, 8}, "1f1b-flush");
  ASSERT_EQ(interleaved.ops.size(), flush.ops.size());
  for (size_t k = 0; k < flush.ops.size(); ++k) {
    EXPECT_EQ(interleaved.ops[k].action, flush.ops[k].action) << k;
    EXPECT_EQ(interleaved.ops[k].start_ns, flush.ops[k].start_ns) << k;
  }
}

}  // namespace
}  // namespace pipesim
