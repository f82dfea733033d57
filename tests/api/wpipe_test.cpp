// WPipe against orders and closed forms worked by hand from the authors' code (schedules/wpipe.cpp): the op
// order of N = 2, the makespan (2NT + N − 1)(F + B) of T batches on uniform pieces (one fill and drain of
// (N − 1)(F + B) per device, no bubble in between), the versions each half reads (the first one step behind,
// two copies; the second synchronous, one), and the peak in flight per device, 2N − d.
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
Scenario uniform(int devices, int microbatches, int batches) {
  return test::uniform_scenario(devices, microbatches, 1.0, 2.0, 0.0, batches);
}

SimulationResult run(const Scenario& scenario, bool fixed_batches = false) {
  return test::run_schedule(scenario, "wpipe", {},
                            fixed_batches ? test::fixed_batches() : SimulationOptions{});
}

// Device d's ops in the order it ran them: "F0.3" (group 0's forward of microbatch 3), "B1.2", "S1" (a step
// of group 1).
std::vector<std::string> order_on(const SimulationResult& r, int device) {
  const int n = r.spec.devices;
  std::vector<OpRecord> ops;
  for (const OpRecord& op : r.trace.ops)
    if (op.device == device) ops.push_back(op);
  std::stable_sort(ops.begin(), ops.end(),
                   [](const OpRecord& a, const OpRecord& b) { return a.start_ns < b.start_ns; });
  std::vector<std::string> out;
  for (const OpRecord& op : ops) {
    const int group = op.action.stage / n;
    out.push_back(op.action.kind == OpKind::U
                      ? fmt::format("S{}", group)
                      : fmt::format("{}{}.{}", op_letter(op.action.kind), group, op.action.microbatch));
  }
  return out;
}

std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  std::string word;
  for (const char c : text + " ") {
    if (c != ' ') {
      word += c;
    } else if (!word.empty()) {
      out.push_back(word);
      word.clear();
    }
  }
  return out;
}

TEST(WPipe, OrderOfTwoDevicesIsTheAuthorsBlocksOfNWithGroupOneBackwardFirst) {
  const SimulationResult r = run(uniform(2, 2, 3), /*fixed_batches=*/true);
  ASSERT_EQ(r.spec.batches, 3) << "the order below is for exactly 3 batches";
  // Device 0: 2N - 1 = 3 forwards, then one forward and one backward at a time; forwards in blocks of N
  // alternating G0, G1; backwards G1 first; a group steps after its block's last backward.
  EXPECT_EQ(order_on(r, 0), words("F0.0 F0.1 F1.0 "
                                  "F1.1 B1.0 F0.2 B1.1 S1 F0.3 B0.0 F1.2 B0.1 S0 F1.3 B1.2 F0.4 B1.3 S1 "
                                  "F0.5 B0.2 F1.4 B0.3 S0 F1.5 B1.4 "
                                  "B1.5 S1 B0.4 B0.5 S0"));
  // Device 1: 2N - 2 = 2 forwards.
  EXPECT_EQ(order_on(r, 1), words("F0.0 F0.1 "
                                  "F1.0 B1.0 F1.1 B1.1 S1 F0.2 B0.0 F0.3 B0.1 S0 F1.2 B1.2 F1.3 B1.3 S1 "
                                  "F0.4 B0.2 F0.5 B0.3 S0 F1.4 B1.4 F1.5 B1.5 S1 "
                                  "B0.4 B0.5 S0"));
}

TEST(WPipe, MakespanOfTBatchesIsTwoNTPlusNMinusOnePieceRoundTrips) {
  for (const int n : {2, 3, 4, 8}) {
    const SimulationResult r = run(uniform(n, n, 6));
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
  const SimulationResult r = run(uniform(kN, kN, 6));
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
    const SimulationResult r = run(uniform(n, n, 6));
    for (int d = 0; d < n; ++d)
      EXPECT_EQ(r.trace.peak_in_flight[d], 2 * n - d) << "N=" << n << " device " << d;
  }
}

// The step batch is N microbatches whatever m: m = 2N runs the same stream, cut into batches of 2N.
TEST(WPipe, StepsEveryNMicrobatchesWhateverTheReportingBatch) {
  const SimulationResult by_n = run(uniform(2, 2, 6), /*fixed_batches=*/true);
  const SimulationResult by_2n = run(uniform(2, 4, 3), /*fixed_batches=*/true);
  for (int d = 0; d < 2; ++d) EXPECT_EQ(order_on(by_n, d), order_on(by_2n, d)) << "device " << d;
  EXPECT_THROW(run(uniform(4, 6, 4)), InputError);
  EXPECT_THROW(run(uniform(4, 3, 4)), InputError);
}

}  // namespace
}  // namespace pipesim
