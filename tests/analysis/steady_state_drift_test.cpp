// The drift, staleness and in-flight figures (analysis/drift.h, sim/metrics.h) of registered schedules run
// by the engine to a steady state (the run length of sim/steady_state.h, as the api runs a scenario's entry:
// tests/schedules/steady_figures.h): saturated streams measured past their fill whatever the requested
// batches, and PACI's mean drift exact over whole accumulation cycles.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "analysis/drift.h"
#include "tests/schedules/steady_figures.h"
#include "tests/sim/plans.h"

namespace pipesim {
namespace {

constexpr TimeNs kMs = kNsPerMs;

// A schedule's steady run with its drift over the window, as the api's result holds them.
struct SteadyDriftRun {
  int batches = 0;  // simulated
  RunMetrics metrics;
  DriftReport drift;
  std::vector<Bytes> activation_bytes_per_microbatch;  // per device
};

// N stages, m microbatches, at least `batches` batches of F = I = W = 1 ms on every stage and 1 MB of
// activations per microbatch (B = 2 ms when not split), as in the repro; `accumulation` > 0 sets
// PACI's a.
SteadyDriftRun steady_drift_run(const std::string& name, int n, int m, int batches, int accumulation = 0) {
  std::map<std::string, std::string> params;
  if (accumulation > 0) params["accumulation"] = std::to_string(accumulation);
  const test::UniformStageCosts costs = test::UniformStageCosts::ms(1.0, 1.0, 1.0).bytes(1'000'000, 0);
  const test::SteadyFigures f = test::steady_figures(test::schedule_run(name, n, m, batches, params), costs);
  SteadyDriftRun r;
  r.batches = f.batches;
  r.metrics = f.metrics;
  r.drift = compute_drift(f.trace, {f.window.first_microbatch, f.window.end_microbatch});
  r.activation_bytes_per_microbatch = f.activation_bytes_per_microbatch;
  return r;
}

// --- the repro: a window inside stage 1's fill printed impossible figures ---------------------------------

// A saturated uniform stream: stage 1 runs one F, I and W per microbatch back to back (3 ms), N microbatches
// in flight (N x M_B), Δ = N−1 steps between F and B on stage 1 (a = 1), zero bubble.
TEST(SteadyState, PaciN8M1IsSaturatedWhateverTheRequestedBatches) {
  for (int batches : {1, 4, 32}) {
    SCOPED_TRACE(batches);
    const SteadyDriftRun r = steady_drift_run("paci", 8, 1, batches, 1);
    EXPECT_EQ(r.metrics.period_ns, 3 * kMs);
    EXPECT_EQ(r.metrics.bubble_fraction, 0.0);
    EXPECT_EQ(r.drift.stages[0].drift_max, 7);
    EXPECT_EQ(r.metrics.devices[0].peak_in_flight, 8);
    EXPECT_EQ(r.metrics.devices[0].peak_activation_bytes, 8 * r.activation_bytes_per_microbatch[0]);
    EXPECT_GE(r.batches, batches);
  }
}

// m ≤ N/4: a batch of 8 microbatches takes 8 x 3 ms on a saturated stage 1; PipeDream stashes one version per
// step in flight on stage 1: N−1 steps plus the current one = N versions.
TEST(SteadyState, StreamsAtN32M8MeasurePastTheFill) {
  for (const char* name : {"paci", "async-1f1b", "pipedream"}) {
    SCOPED_TRACE(name);
    const SteadyDriftRun r = steady_drift_run(name, 32, 8, 4, std::string(name) == "paci" ? 1 : 0);
    EXPECT_EQ(r.metrics.period_ns, 8 * 3 * kMs);
    EXPECT_EQ(r.metrics.bubble_fraction, 0.0);
    if (std::string(name) == "pipedream") {
      EXPECT_EQ(r.drift.stages[0].weight_versions_max, 32);
    } else {
      EXPECT_EQ(r.drift.stages[0].drift_max, 31);
    }
  }
}

// PACI's mean Δ over whole a-cycles is (N−i)/a exactly on every stage, a dividing m or not.
TEST(SteadyStateGrid, PaciMeanDriftIsExactWhenADividesTheWindow) {
  for (int n : {2, 5, 8, 16}) {
    for (int m : {1, 3, n}) {
      for (int a : {1, 2, 3, 4, 8}) {
        SCOPED_TRACE(fmt::format("N={} m={} a={}", n, m, a));
        const SteadyDriftRun r = steady_drift_run("paci", n, m, 1, a);
        const int window_microbatches = r.metrics.end_microbatch - r.metrics.first_steady_microbatch;
        EXPECT_EQ(window_microbatches % a, 0);
        for (int i = 1; i <= n; ++i) {
          EXPECT_DOUBLE_EQ(r.drift.stages[i - 1].drift_mean, static_cast<double>(n - i) / a) << "stage " << i;
          EXPECT_EQ(r.drift.stages[i - 1].drift_max, (n - i + a - 1) / a) << "stage " << i;
        }
      }
    }
  }
}

}  // namespace
}  // namespace pipesim
