// Closed forms with uniform stages and no comm (docs/design.md §4-§5): the flush bubbles, interleaving's
// reduction by the number of chunks, and the in-flight peaks.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::run_schedule;
using test::uniform_scenario;

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

// Runs a flush schedule on one shape and checks what GPipe and 1F1B-flush share: one batch takes
// (m+N-1)(F+B), the barrier keeps batches apart, so the bubble is (N-1)/(m+N-1).
SimulationResult run_flush(const Shape& s, const std::string& schedule) {
  const SimulationResult r =
      run_schedule(uniform_scenario(s.stages, s.microbatches, kForwardMs, kBackwardMs), schedule);
  EXPECT_NEAR(r.metrics.bubble_fraction, static_cast<double>(s.stages - 1) / (s.microbatches + s.stages - 1),
              1e-9);
  EXPECT_EQ(r.metrics.period_ns, ms_to_ns((s.microbatches + s.stages - 1) * (kForwardMs + kBackwardMs)));
  return r;
}

TEST(ClosedForm, GPipeBubbleAndPeakInFlight) {
  for (const Shape& s : grid()) {
    SCOPED_TRACE(fmt::format("N={} m={}", s.stages, s.microbatches));
    const SimulationResult r = run_flush(s, "gpipe");
    // Every forward of the batch runs before any backward: m activations on every device.
    for (int d = 0; d < s.stages; ++d) EXPECT_EQ(r.metrics.devices[d].peak_in_flight, s.microbatches) << d;
  }
}

TEST(ClosedForm, OneFOneBFlushBubbleAndPeakInFlight) {
  for (const Shape& s : grid()) {
    SCOPED_TRACE(fmt::format("N={} m={}", s.stages, s.microbatches));
    const SimulationResult r = run_flush(s, "1f1b-flush");
    // Stage i (1-based) holds its N-i warm-up forwards plus the one in progress: N-i+1, or m if fewer.
    for (int i = 1; i <= s.stages; ++i) {
      EXPECT_EQ(r.metrics.devices[i - 1].peak_in_flight, std::min(s.stages - i + 1, s.microbatches))
          << "stage " << i;
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
      const SimulationResult r =
          run_schedule(uniform_scenario(s.stages, s.microbatches, kForwardMs, kBackwardMs),
                       "interleaved-1f1b", {{"chunks", std::to_string(v)}});
      const double f_plus_b = kForwardMs + kBackwardMs;
      EXPECT_EQ(r.metrics.period_ns, ms_to_ns(s.microbatches * f_plus_b + (s.stages - 1) * f_plus_b / v));
      EXPECT_NEAR(r.metrics.bubble_fraction,
                  static_cast<double>(s.stages - 1) / (v * s.microbatches + s.stages - 1), 1e-9);
      EXPECT_LT(r.metrics.bubble_fraction, previous);
      previous = r.metrics.bubble_fraction;
    }
  }
}

// With one chunk the interleaved schedule is exactly 1F1B-flush, op for op.
TEST(ClosedForm, InterleavedWithOneChunkIsOneFOneB) {
  const Scenario scenario = uniform_scenario(4, 8, kForwardMs, kBackwardMs);
  const SimulationResult interleaved = run_schedule(scenario, "interleaved-1f1b", {{"chunks", "1"}});
  const SimulationResult flush = run_schedule(scenario, "1f1b-flush");
  ASSERT_EQ(interleaved.trace.ops.size(), flush.trace.ops.size());
  for (size_t k = 0; k < flush.trace.ops.size(); ++k) {
    EXPECT_EQ(interleaved.trace.ops[k].action, flush.trace.ops[k].action) << k;
    EXPECT_EQ(interleaved.trace.ops[k].start_ns, flush.trace.ops[k].start_ns) << k;
  }
}

}  // namespace
}  // namespace pipesim
