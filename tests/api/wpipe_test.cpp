// WPipe's steady runs through the api, against closed forms worked by hand from the authors' code
// (schedules/wpipe.cpp): the makespan (2NT + N − 1)(F + B) of T batches on uniform pieces (one fill and drain
// of (N − 1)(F + B) per device, no bubble in between), the versions each half reads (the first one step
// behind, two copies; the second synchronous, one: the drift the api reports), and the peak in flight per
// device, 2N − d, over the run the steady-state search chose. The op order: tests/schedules/wpipe_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "api/simulation.h"
#include "base/errors.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

// N devices, 2N uniform pieces (F = 0.5 ms, B = 1 ms each: a device's 1 + 2 ms over its two), no comm.
Scenario wpipe_scenario(int devices, int microbatches, int batches) {
  return test::uniform_scenario(devices, microbatches, 1.0, 2.0, 0.0, batches);
}

SimulationResult wpipe_steady_run(const Scenario& scenario) {
  return test::run_schedule(scenario, "wpipe");
}

TEST(WPipe, MakespanOfTBatchesIsTwoNTPlusNMinusOnePieceRoundTrips) {
  for (const int n : {2, 3, 4, 8}) {
    const SimulationResult r = wpipe_steady_run(wpipe_scenario(n, n, 6));
    const long t = r.spec.batches;
    // F + B of one piece: the scenario's 1 + 2 ms per device split over its two pieces.
    const TimeNs round_trip_ns = 1'500'000;
    EXPECT_EQ(r.trace.makespan_ns, (2 * n * t + n - 1) * round_trip_ns) << "N=" << n << " T=" << t;
    // Every device idles (N − 1)(F + B) in all: the fill and the drain, no bubble between.
    for (int d = 0; d < n; ++d) {
      TimeNs busy = 0;
      for (const OpRecord& op : r.trace.ops)
        if (op.device == d) busy += op.duration_ns();
      EXPECT_EQ(r.trace.makespan_ns - busy, (n - 1) * round_trip_ns) << "N=" << n << " device " << d;
    }
    EXPECT_NEAR(r.metrics.bubble_fraction, 0.0, 1e-12) << "N=" << n;
  }
}

TEST(WPipe, FirstHalfReadsOneVersionBehindWithTwoCopiesSecondHalfIsSynchronous) {
  constexpr int kN = 4;
  const SimulationResult r = wpipe_steady_run(wpipe_scenario(kN, kN, 6));
  for (const OpRecord& op : r.trace.ops) {
    if (op.action.kind == OpKind::U) continue;
    const int block = op.action.microbatch / kN;
    const bool first_half = op.action.stage < kN;
    ASSERT_EQ(op.weight_version, first_half ? std::max(block - 1, 0) : block) << describe(op.action);
  }
  for (int s = 0; s < 2 * kN; ++s) {
    const StageDrift& d = r.drift.stages[s];
    const bool first_half = s < kN;
    EXPECT_EQ(d.weight_versions_max, first_half ? 2 : 1) << "stage " << s + 1;
    EXPECT_EQ(d.drift_max, 0) << "stage " << s + 1;
    for (int j = 0; j < r.spec.total_microbatches(); ++j)
      ASSERT_EQ(d.staleness[j], first_half && j >= kN ? 1 : 0) << "stage " << s + 1 << " microbatch " << j;
    EXPECT_EQ(r.guarantees[s].weight_versions, first_half ? 2 : 1);
  }
  // One step per block of N backwards, on each of the 2N pieces.
  const long steps = std::count_if(r.trace.ops.begin(), r.trace.ops.end(),
                                   [](const OpRecord& op) { return op.action.kind == OpKind::U; });
  EXPECT_EQ(steps, 2 * kN * r.spec.batches);
}

TEST(WPipe, PeakInFlightOnDeviceDIsTwoNMinusD) {
  for (const int n : {2, 4, 8}) {
    const SimulationResult r = wpipe_steady_run(wpipe_scenario(n, n, 6));
    for (int d = 0; d < n; ++d)
      EXPECT_EQ(r.trace.peak_in_flight[d], 2 * n - d) << "N=" << n << " device " << d;
  }
}

}  // namespace
}  // namespace pipesim
