// Asynchronous schedules against their closed forms (docs/design.md §4): PACI's drift ⌈(N−i)/a⌉ with mean
// (N−i)/a, its throughput against 1F1B-flush, async 1F1B's Δ_i = N−i, PipeDream's N−i+1 versions and τ_i =
// N−i, and PipeDream-2BW's version formula. Stages are 1-based (i) in comments and 0-based (s = i−1) in code.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "api/simulation.h"
#include "base/errors.h"

namespace pipesim {
namespace {

// Uniform stages, no comm: F = 1 ms, B = 2 ms.
Scenario uniform(int stages, int microbatches, int batches) {
  return parse_scenario(fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: {}}}\n"
                                    "costs: {{forward_ms: 1.0, backward_ms: 2.0}}\n",
                                    stages, microbatches, batches),
                        "async_schedules_test.yaml");
}

SimulationResult async_run(const Scenario& scenario, const std::string& name, int accumulation = 0,
                           const std::string& max_in_flight = "") {
  ScheduleRequest request{name, ScheduleParams("async_schedules_test")};
  if (accumulation > 0) request.params.set("accumulation", std::to_string(accumulation));
  if (!max_in_flight.empty()) request.params.set("max_in_flight", max_in_flight);
  return simulate_schedule(scenario, request);
}

// Microbatches of the steady-state window the metrics used.
std::pair<int, int> window(const SimulationResult& r) {
  return {r.metrics.first_steady_microbatch, r.metrics.end_microbatch};
}

int ceil_div(int x, int a) {
  return (x + a - 1) / a;
}

class PaciDrift : public ::testing::TestWithParam<int> {};

TEST_P(PaciDrift, MaxIsCeilAndSteadyMeanIsExactWithOneCopy) {
  constexpr int kN = 8;
  const int a = GetParam();
  const Scenario scenario = uniform(kN, 16, 8);  // windows of whole batches: a multiple of every a here
  const SimulationResult paci = async_run(scenario, "paci", a);
  const SimulationResult flush = async_run(scenario, "1f1b-flush");
  ASSERT_EQ(paci.drift.stages.size(), static_cast<size_t>(kN));
  const auto [first, end] = window(paci);
  ASSERT_GE(first, kN) << "the window must start after the pipeline filled";
  ASSERT_EQ((end - first) % a, 0);
  for (int s = 0; s < kN; ++s) {
    const int i = s + 1;
    const StageDrift& d = paci.drift.stages[s];
    EXPECT_EQ(d.drift_max, ceil_div(kN - i, a)) << "stage " << i;
    EXPECT_DOUBLE_EQ(d.drift_mean, static_cast<double>(kN - i) / a) << "stage " << i;
    EXPECT_EQ(paci.guarantees[s].drift_bound, ceil_div(kN - i, a));
    EXPECT_EQ(d.weight_versions_max, 1) << "stage " << i;
    // Without stashing the gradient is applied to the version the backward read: τ = Δ.
    EXPECT_EQ(d.staleness, d.drift) << "stage " << i;
    // Peak in flight equals 1F1B-flush's, N+1−i.
    EXPECT_EQ(d.in_flight_max, kN + 1 - i) << "stage " << i;
    EXPECT_EQ(paci.trace.peak_in_flight[s], flush.trace.peak_in_flight[s]) << "stage " << i;
    EXPECT_EQ(paci.trace.peak_activation_bytes[s], flush.trace.peak_activation_bytes[s]) << "stage " << i;
  }
  // Stage N alternates F and B: no drift at all.
  EXPECT_EQ(paci.drift.stages[kN - 1].drift_histogram, std::vector<long>{paci.spec.total_microbatches()});
}

INSTANTIATE_TEST_SUITE_P(Accumulation, PaciDrift, ::testing::Values(1, 2, 4, 8, 16));

TEST(Paci, DriftOfEveryMicrobatchCountsTheStepsBetweenItsForwardAndBackward) {
  // In the saturated steady state stage i runs the backwards of the N−i microbatches before j between F(j)
  // and B(j), and steps after each backward whose 1-based count is a multiple of a.
  constexpr int kN = 6;
  constexpr int kA = 4;
  const SimulationResult r = async_run(uniform(kN, 8, 8), "paci", kA);
  const auto [first, end] = window(r);
  for (int s = 0; s < kN; ++s) {
    for (int j = first; j < end; ++j) {
      int steps = 0;
      for (int k = j - (kN - 1 - s); k < j; ++k) steps += (k + 1) % kA == 0;
      ASSERT_EQ(r.drift.stages[s].drift[j], steps) << "stage " << s + 1 << " microbatch " << j;
    }
  }
}

TEST(Paci, ThroughputOfFlushOverPaciAtMEqualsAIsMOverMPlusNMinusOne) {
  constexpr int kN = 8;
  for (int m : {1, 2, 4, 8, 16}) {
    const Scenario scenario = uniform(kN, m, std::max(4, 128 / m));
    const SimulationResult flush = async_run(scenario, "1f1b-flush");
    const SimulationResult paci = async_run(scenario, "paci", m);
    const double ratio = flush.metrics.throughput_samples_per_s / paci.metrics.throughput_samples_per_s;
    EXPECT_NEAR(ratio, static_cast<double>(m) / (m + kN - 1), 1e-6) << "m=" << m;
    EXPECT_EQ(paci.metrics.period_ns, m * ms_to_ns(3.0)) << "m=" << m;  // one F and one B per microbatch
  }
}

TEST(Paci, StreamWindowSkipsTheFillEvenWhenFewBatchesAreRequested) {
  // Batches of one microbatch: stage 1 starts F(8) only when its first backward ends, so the window must
  // start after a warm-up of 2N microbatches, whatever was requested; one F and one B per microbatch.
  for (int batches : {1, 4, 16}) {
    const SimulationResult r = async_run(uniform(8, 1, batches), "paci", 1);
    EXPECT_EQ(r.metrics.first_steady_microbatch, 16) << batches;
    EXPECT_EQ(r.metrics.period_ns, ms_to_ns(3.0)) << batches;
    EXPECT_GE(r.spec.batches, batches);
  }
}

TEST(Paci, RaisedLimitsRaiseTheDriftToTheGeneralBound) {
  // L_i = N+2−i: Δ reaches ⌈(L_i−1)/a⌉ = ⌈(N+1−i)/a⌉ on the stages that can fill, breaking ⌈(N−i)/a⌉.
  constexpr int kN = 4;
  const SimulationResult r = async_run(uniform(kN, 8, 8), "paci", 1, "5/4/3/2");
  EXPECT_EQ(r.label, "paci(accumulation=1,max_in_flight=5,4,3,2)");
  for (int s = 0; s < kN; ++s) {
    EXPECT_EQ(r.guarantees[s].drift_bound, kN + 1 - (s + 1)) << "stage " << s + 1;
    EXPECT_EQ(r.guarantees[s].invariant_drift_bound, kN - (s + 1)) << "stage " << s + 1;
    EXPECT_LE(r.drift.stages[s].drift_max, r.guarantees[s].drift_bound) << "stage " << s + 1;
    EXPECT_LE(r.drift.stages[s].in_flight_max, kN + 2 - (s + 1)) << "stage " << s + 1;
  }
  EXPECT_EQ(r.drift.stages[0].drift_max, kN);
}

TEST(Paci, InFlightLimitIsAScalarOrOnePerStage) {
  const Scenario scenario = uniform(4, 4, 4);
  const SimulationResult scalar = async_run(scenario, "paci", 2, "2");
  for (const StageDrift& d : scalar.drift.stages) EXPECT_LE(d.in_flight_max, 2);
  EXPECT_EQ(scalar.guarantees[0].drift_bound, 1);
  EXPECT_EQ(async_run(scenario, "paci", 1, "4/3/2/1").drift.stages[0].drift_max,
            3);  // '/' for the command line
  EXPECT_THROW(async_run(scenario, "paci", 1, "4/3/2"), InputError);
  EXPECT_THROW(async_run(scenario, "paci", 1, "4/3/0/1"), InputError);
  EXPECT_THROW(async_run(scenario, "paci", 1, "4,3,2,1"),
               InputError);  // ',' separates schedules, never items
  EXPECT_THROW(async_run(scenario, "paci", 1, "x"), InputError);
}

TEST(Paci, ScenarioListParameterReachesTheSchedule) {
  const Scenario scenario = parse_scenario(
      "pipeline: {stages: 3, microbatches: 4}\n"
      "costs: {forward_ms: 1, backward_ms: 2}\n"
      "schedules: [{name: paci, accumulation: 2, max_in_flight: [3, 3, 1]}]\n",
      "list.yaml");
  ASSERT_EQ(scenario.schedules.size(), 1u);
  // Item by item, never joined into text and re-split.
  EXPECT_EQ(scenario.schedules[0].params.get_int_list("max_in_flight", 1), (std::vector<int>{3, 3, 1}));
  EXPECT_EQ(std::get<std::vector<int>>(scenario.schedules[0].params.resolved().at("max_in_flight")),
            (std::vector<int>{3, 3, 1}));
  EXPECT_THROW(scenario.schedules[0].params.get_int("max_in_flight", 1, 1),
               InputError);  // a list, not an int
  EXPECT_THROW(
      parse_scenario("pipeline: {stages: 3, microbatches: 4}\ncosts: {forward_ms: 1, backward_ms: 2}\n"
                     "schedules: [{name: paci, max_in_flight: [[3], 3, 1]}]\n",
                     "bad.yaml"),
      InputError);
}

TEST(Async1F1B, DriftIsNMinusIOnEverySteadyMicrobatch) {
  constexpr int kN = 6;
  const SimulationResult r = async_run(uniform(kN, 8, 6), "async-1f1b");
  const auto [first, end] = window(r);
  for (int s = 0; s < kN; ++s) {
    EXPECT_EQ(r.guarantees[s].drift_bound, kN - 1 - s);
    EXPECT_EQ(r.drift.stages[s].weight_versions_max, 1);
    for (int j = first; j < end; ++j) {
      ASSERT_EQ(r.drift.stages[s].drift[j], kN - 1 - s) << "stage " << s + 1 << " microbatch " << j;
    }
  }
}

TEST(PipeDream, StashingKeepsNMinusIPlusOneVersionsNoDriftAndStalenessNMinusI) {
  constexpr int kN = 6;
  const SimulationResult r = async_run(uniform(kN, 8, 6), "pipedream");
  const auto [first, end] = window(r);
  for (int s = 0; s < kN; ++s) {
    const StageDrift& d = r.drift.stages[s];
    EXPECT_EQ(d.weight_versions_max, kN - s) << "stage " << s + 1;
    EXPECT_EQ(d.drift_max, 0) << "stage " << s + 1;
    for (int j = first; j < end; ++j) {
      ASSERT_EQ(d.staleness[j], kN - 1 - s) << "stage " << s + 1 << " microbatch " << j;
    }
  }
  // The backward reads exactly the version its forward read.
  for (const OpRecord& op : r.trace.ops) {
    if (op.action.kind != OpKind::B) continue;
    const auto f = std::find_if(r.trace.ops.begin(), r.trace.ops.end(), [&](const OpRecord& o) {
      return o.action.kind == OpKind::F && o.action.stage == op.action.stage &&
             o.action.microbatch == op.action.microbatch;
    });
    ASSERT_NE(f, r.trace.ops.end());
    ASSERT_EQ(op.weight_version, f->weight_version) << describe(op.action);
  }
}

TEST(PipeDream2BW, EveryMicrobatchReadsTheFormulaVersionWithTwoCopiesAndStalenessOne) {
  constexpr int kN = 4;
  for (int m : {4, 5, 8}) {
    const SimulationResult r = async_run(uniform(kN, m, 6), "pipedream-2bw");
    for (const OpRecord& op : r.trace.ops) {
      if (op.action.kind == OpKind::U) continue;
      const int k = op.action.microbatch + 1;  // 1-based
      ASSERT_EQ(op.weight_version, std::max((k - 1) / m - 1, 0)) << describe(op.action) << " m=" << m;
    }
    for (int s = 0; s < kN; ++s) {
      const StageDrift& d = r.drift.stages[s];
      EXPECT_EQ(d.weight_versions_max, 2) << "stage " << s + 1 << " m=" << m;
      EXPECT_EQ(d.drift_max, 0);
      for (int j = 0; j < r.spec.total_microbatches(); ++j) {
        ASSERT_EQ(d.staleness[j], j < m ? 0 : 1) << "stage " << s + 1 << " microbatch " << j << " m=" << m;
      }
    }
    // One step per m backwards on every stage.
    const long steps = std::count_if(r.trace.ops.begin(), r.trace.ops.end(),
                                     [](const OpRecord& op) { return op.action.kind == OpKind::U; });
    EXPECT_EQ(steps, kN * r.spec.batches);
  }
}

TEST(PipeDream2BW, NeedsAtLeastNMicrobatchesPerBatch) {
  EXPECT_THROW(async_run(uniform(4, 3, 4), "pipedream-2bw"), InputError);
}

}  // namespace
}  // namespace pipesim
