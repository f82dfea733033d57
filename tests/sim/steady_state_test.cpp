// The run length's own arithmetic (sim/steady_state.h), on windows, hints and traces stated directly: the
// first window passes the fill and holds whole cycles widened by the requested batches, per-batch scaling
// is exact, the forward-gap repeat, a transient repeat left out of the cycle, and a clear error when a run
// never settles. Runs of registered schedules to a steady state are
// tests/schedules/steady_state_runs_test.cpp and tests/analysis/steady_state_drift_test.cpp; the api's checks
// of the figures stay in tests/api/steady_state_test.cpp.
#include "sim/steady_state.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "base/errors.h"
#include "sim/trace.h"

namespace pipesim {
namespace {

// --- the window arithmetic, by hand ---------------------------------------------------------------------

// Warm-up 16 microbatches, a cycle of 6, drain 19, m = 2: the warm-up in whole cycles (18), halves of one
// cycle, the window [18, 30), and the run holds 30 + 19 = 49 microbatches in whole batches: 25.
TEST(SteadyState, InitialWindowIsWarmupTwoWholeCyclesAndDrain) {
  RunLengthOptions o;
  o.microbatches_per_batch = 2;
  o.min_batches = 1;
  o.hint = {16, 6, 19};
  RunWindow w = initial_window(o);
  EXPECT_EQ(w.first_microbatch, 18);
  EXPECT_EQ(w.end_microbatch, 30);
  EXPECT_EQ(w.total_batches, 25);
  // 40 requested (80 microbatches): (80 − 18 − 19) / 12 = 3 pairs of cycles widen the window to 36
  // microbatches; of the 80 − 73 = 7 left over, one whole cycle (6) more of warm-up.
  o.min_batches = 40;
  w = initial_window(o);
  EXPECT_EQ(w.microbatches(), 36);
  EXPECT_EQ(w.first_microbatch, 24);
  EXPECT_EQ(w.total_batches, 40);
  // A cycle of one batch keeps the window at batch starts: (80 − 16 − 19) / 4 = 11 pairs of 2, rounded down
  // to whole multiples of the fill's quarter ((16 + 19) / 4 / 2 = 4 pairs): 8 pairs, 32 microbatches from
  // 16; of the 80 − 67 = 13 left over, 12 (6 cycles) more of warm-up: it starts at 28 = batch 14.
  o.hint = {16, 2, 19};
  w = initial_window(o);
  EXPECT_EQ(w.microbatches(), 32);
  EXPECT_EQ(w.first_microbatch, 28);
  EXPECT_EQ(w.first_microbatch % o.microbatches_per_batch, 0);
}

// A stream of few microbatches per batch over many stages: fill 2·64 = 128 microbatches = 32 batches of 4,
// drain 129; the window takes a quarter of those 257 microbatches in whole cycles: 64 a half.
TEST(SteadyState, LongFillAndDrainWidenTheFirstWindow) {
  RunLengthOptions o;
  o.microbatches_per_batch = 4;
  o.hint = {128, 4, 129};
  const RunWindow w = initial_window(o);
  EXPECT_EQ(w.first_microbatch, 128);
  EXPECT_EQ(w.end_microbatch, 256);
  EXPECT_EQ(w.total_batches, 97);
  o.exact_repeat = false;  // noisy costs: halves of one batch
  EXPECT_EQ(initial_window(o).microbatches(), 8);
}

// Per-batch figures of a window cut between batches: ⌊value · m / microbatches⌋ exactly, also where value · m
// would overflow 64 bits (a window of 100 s ops).
TEST(SteadyState, PerBatchScalingIsExactWithoutOverflow) {
  const RunWindow w{4, 128, 348};  // 220 microbatches
  EXPECT_EQ(w.per_batch(681'656'250, 220), 681'656'250);
  EXPECT_EQ(w.per_batch(1000, 64), 290);  // 64000 / 220 = 290.9
  for (const TimeNs value : {TimeNs{3}, TimeNs{219}, TimeNs{400'000'000'000'000'123}}) {
    for (const int m : {1, 7, 64, 4096}) {
      const __int128 exact = static_cast<__int128>(value) * m / 220;
      EXPECT_EQ(static_cast<__int128>(w.per_batch(value, m)), exact) << value << " x " << m;
    }
  }
}

// Stage 1's forward starts as a trace: gaps 1,2,1,2,... repeat every 2; 1,1,2 every 3; no repeat: 0.
RunTrace steady_state_forward_starts(const std::vector<TimeNs>& starts) {
  RunTrace trace;
  trace.layout = PipelineLayout::linear(1);
  for (size_t j = 0; j < starts.size(); ++j) {
    trace.ops.push_back({forward(0, static_cast<int>(j)), 0, 0, starts[j], starts[j] + 1});
  }
  return trace;
}

TEST(SteadyState, ForwardGapRepeatIsTheSmallestPeriodOfTheGaps) {
  EXPECT_EQ(forward_gap_repeat(steady_state_forward_starts({0, 1, 3, 4, 6, 7, 9}), 0, 6), 2);
  EXPECT_EQ(forward_gap_repeat(steady_state_forward_starts({0, 1, 2, 4, 5, 6, 8}), 0, 6), 3);
  EXPECT_EQ(forward_gap_repeat(steady_state_forward_starts({0, 5, 5, 5, 5}), 1, 4), 1);
  EXPECT_EQ(forward_gap_repeat(steady_state_forward_starts({0, 1, 3, 6, 10, 15}), 0, 5), 0);
}

// A transient repeat does not stay in the cycle: a run whose fill repeats every 84 microbatches and whose
// steady state every 109 (PACI at N = 32, m = 4 over inter-node links did) is measured over halves of
// lcm(4, 109) = 436 multiples, not of lcm(4, 84, 109) = 9,156, which outgrew the op cap.
TEST(SteadyState, ATransientsRepeatDoesNotStayInTheCycle) {
  class Probe final : public SteadyStateProbe {
   public:
    RunWindow window;
    int forward_gap_repeat(int first, int /*end*/) const override { return first < 300 ? 84 : 109; }
    bool halves_agree(const RunWindow& w) const override {
      return w.first_microbatch >= 300 && (w.microbatches() / 2) % 109 == 0;
    }
    long ops() const override { return 10L * window.end_microbatch; }
  };
  RunLengthOptions o;
  o.microbatches_per_batch = 4;
  o.hint = {64, 4, 0};
  o.max_ops = 200'000;  // 20,000 microbatches: 9,156-microbatch halves do not fit
  o.run_name = "paci";
  Probe probe;
  const SteadyWindow found = find_steady_window(o, [&](const RunWindow& w) -> const SteadyStateProbe& {
    probe.window = w;
    return probe;
  });
  EXPECT_EQ(found.window.microbatches() / 2 % 436, 0) << found.window.microbatches();
  EXPECT_LT(found.window.microbatches(), 9156);
  EXPECT_GE(found.window.first_microbatch, 300);
}

// A run that never settles (each batch longer than the last) ends in a clear error, not a hang.
TEST(SteadyState, NoSteadyStateIsAnErrorWithinTheOpCap) {
  RunLengthOptions o;
  o.microbatches_per_batch = 1;
  o.hint = {1, 1, 0};
  o.max_ops = 10'000;
  o.run_name = "growing";
  int runs = 0;
  auto growing = [&](int batches) {
    ++runs;
    std::vector<TimeNs> starts;
    for (int b = 0; b <= batches; ++b) starts.push_back(static_cast<TimeNs>(b) * b);
    RunTrace trace = steady_state_forward_starts(starts);
    trace.total_microbatches = batches + 1;
    return trace;
  };
  try {
    simulate_steady_state(o, growing);
    FAIL() << "expected an error";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("growing: no steady state"), std::string::npos) << e.what();
  }
  EXPECT_LT(runs, 20);
}

}  // namespace
}  // namespace pipesim
