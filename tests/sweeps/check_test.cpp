// `pipesim check`: it fails on PACI with raised in-flight limits (with the smallest counterexample and the
// general bound reported), it passes on random durations and stragglers, each guarantee can trip it, and the
// noise it uses is deterministic.
#include "sweeps/check.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>

#include "base/errors.h"
#include "cost_models/explicit_costs.h"
#include "pipesim_source_dir.h"
#include "sweeps/check_report.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

const std::string kViolating = std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/paci/violating.yaml";

CheckOptions quiet_options(int seeds) {
  CheckOptions o;
  o.seeds = seeds;
  return o;
}

TEST(Check, TermsInN) {
  EXPECT_EQ(evaluate_term("3", 8), 3);
  EXPECT_EQ(evaluate_term("N", 8), 8);
  EXPECT_EQ(evaluate_term("N-1", 8), 7);
  EXPECT_EQ(evaluate_term("2N", 8), 16);
  EXPECT_EQ(evaluate_term("N+2", 8), 10);
  EXPECT_THROW(evaluate_term("M", 8), InputError);
  EXPECT_THROW(evaluate_term("N*2", 8), InputError);
}

TEST(Check, PaciWithRaisedLimitsBreaksThePaperBoundButNotTheGeneralOne) {
  const CheckReport report = check_scenario(load_scenario(kViolating), quiet_options(4));
  EXPECT_FALSE(report.passed());
  ASSERT_TRUE(report.smallest.has_value());
  const Violation& v = *report.smallest;
  // Seed 0 runs the uniform costs as given; stage 1 holds N microbatches, one more than 1F1B, so with a = 1
  // the drift reaches N = 4 against ⌈(N−1)/1⌉ = 3, first for microbatch 4 (the first whose forward saw 4 in
  // flight).
  EXPECT_EQ(v.schedule, "paci(accumulation=1,max_in_flight=5,4,3,2)");
  EXPECT_EQ(std::tie(v.stages, v.microbatches, v.accumulation, v.seed, v.stage, v.microbatch),
            std::make_tuple(4, 8, 1, 0, 0, 4));
  EXPECT_EQ(v.what, "Δ");
  EXPECT_EQ(v.value, 4);
  EXPECT_EQ(v.bound, 3);
  EXPECT_EQ(v.general_bound, 4);
  for (const ScheduleCheckSummary& s : report.schedules) {
    EXPECT_TRUE(s.general_bound_differs) << s.schedule;
    EXPECT_EQ(s.general_bound_broken_runs, 0) << s.schedule;
    EXPECT_EQ(s.runs, 4);
  }
  const std::string text = render_check_report(report);
  EXPECT_NE(
      text.find("smallest counterexample: paci(accumulation=1,max_in_flight=5,4,3,2) N=4 m=8 a=1 seed=0, "
                "stage 1, microbatch 4: Δ = 4 > 3"),
      std::string::npos)
      << text;
  EXPECT_NE(text.find("the general bound ⌈(L_i−1)/a⌉ held on all 4 runs"), std::string::npos) << text;
}

int exit_code(const std::string& args) {
  const int status = std::system(fmt::format("{} check {} > /dev/null 2>&1", PIPESIM_BINARY, args).c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Check, CommandExitsFourOnAViolationOneOnBadInputAndZeroOtherwise) {
  EXPECT_EQ(exit_code(kViolating + " --seeds 2"), 4);
  EXPECT_EQ(exit_code(kViolating + " --set pipeline.stages=0"), 1);
  EXPECT_EQ(exit_code("--no-such-option"), 2);
  EXPECT_EQ(
      exit_code("--schedules paci,1f1b-flush --stages 2,3 --microbatches 2,N --accumulation 1,N --seeds 2"),
      0);
}

TEST(Check, WritesJsonAndJUnitForCiSystems) {
  test::TempDir dir;
  const std::string json = dir.file("check.json"), junit = dir.file("check.xml");
  EXPECT_EQ(exit_code(kViolating + " --seeds 2 --json " + json + " --junit " + junit), 4);
  const std::string json_text = test::read_file(json), junit_text = test::read_file(junit);
  EXPECT_NE(json_text.find("\"passed\": false"), std::string::npos) << json_text;
  EXPECT_NE(json_text.find("\"format\": \"pipesim-check\""), std::string::npos);
  EXPECT_NE(json_text.find("Δ = 4 > 3"), std::string::npos) << json_text;
  EXPECT_NE(junit_text.find("<testsuites name=\"pipesim check\" tests=\"2\" failures=\"2\""),
            std::string::npos)
      << junit_text;
  EXPECT_NE(junit_text.find("Δ = 4 &gt; 3"), std::string::npos) << junit_text;  // escaped
  EXPECT_EQ(exit_code("--schedules 1f1b-flush -N 2 -m 2 -j 1 --seeds 1 --junit " + junit), 0);
  EXPECT_NE(test::read_file(junit).find("failures=\"0\""), std::string::npos);
}

TEST(Check, RandomDurationsAndStragglersNeverBreakABound) {
  CheckOptions o;
  o.schedules = {"gpipe", "1f1b-flush", "pipedream", "async-1f1b", "pipedream-2bw", "paci"};
  o.stages = {2, 3, 5, 8};
  o.microbatches = {"1", "3", "N", "2N"};
  o.accumulation = {"1", "2", "N-1", "N+1"};
  o.seeds = 8;
  o.noise = {0, 0.6, 0.5, 0.1, 8.0};
  const CheckReport report = check_grid(o);
  EXPECT_TRUE(report.passed()) << render_check_report(report);
  long runs = 0;
  for (const ScheduleCheckSummary& s : report.schedules) runs += s.runs;
  EXPECT_EQ(runs, report.runs);
  // Distinct m per N = 2, 3, 5, 8: {1,2,3,4}, {1,3,6}, {1,3,5,10}, {1,3,8,16}; 2BW only m >= N: 3+2+2+2;
  // PACI's distinct a: {1,2,3}, {1,2,4}, {1,2,4,6}, {1,2,7,9}. 8 seeds each.
  const int m_values = 4 + 3 + 4 + 4;
  EXPECT_EQ(report.runs, 8 * (4 * m_values + (3 + 2 + 2 + 2) + (4 * 3 + 3 * 3 + 4 * 4 + 4 * 4)));
}

TEST(Check, EveryGuaranteeCanTrip) {
  const Scenario scenario = parse_scenario(
      "pipeline: {stages: 4, microbatches: 4, batches: 4}\ncosts: {forward_ms: 1, backward_ms: 2}\n",
      "t.yaml");
  SimulationResult r = simulate_schedule(scenario, {"pipedream-2bw", ScheduleParams("t")});
  ASSERT_TRUE(check_run(r, 0, 0).empty());
  SimulationResult versions = r;
  versions.guarantees[1].weight_versions = 1;
  SimulationResult steady = r;
  steady.guarantees[2].steady_staleness = 0;
  steady.guarantees[2].staleness_bound = 1;
  SimulationResult stale = r;
  stale.guarantees[3].staleness_bound = 0;
  SimulationResult in_flight = r;
  in_flight.guarantees[0].max_in_flight = 3;
  SimulationResult drift = simulate_schedule(scenario, {"async-1f1b", ScheduleParams("t")});
  drift.guarantees[0].invariant_drift_bound = 2;
  const std::vector<std::tuple<const SimulationResult*, std::string, int, int>> cases = {
      {&versions, "weight versions", 1, -1},
      {&steady, "τ", 2, 4},
      {&stale, "τ", 3, 4},
      {&in_flight, "in flight", 0, -1},
      {&drift, "Δ", 0, 3}};
  for (const auto& [result, what, stage, microbatch] : cases) {
    const std::vector<Violation> found = check_run(*result, 0, 0);
    ASSERT_EQ(found.size(), 1u) << what;
    EXPECT_EQ(found[0].what, what);
    EXPECT_EQ(found[0].stage, stage) << what;
    EXPECT_EQ(found[0].microbatch, microbatch) << what;
  }
}

class FixedCosts final : public CostModel {
 public:
  TimeNs duration(const Action& a) const override { return 1'000'000 * (1 + static_cast<int>(a.kind)); }
  Bytes activation_bytes(int) const override { return 7; }
  Bytes weight_grad_activation_bytes(int) const override { return 3; }
  Bytes transfer_bytes(int) const override { return 5; }
};

TEST(NoisyCosts, SameSeedSameDurationsWhateverTheOrder) {
  const NoiseSpec noise{42, 0.3, 0.3, 0.05, 5.0};
  const NoisyCosts a(std::make_unique<FixedCosts>(), noise);
  const NoisyCosts b(std::make_unique<FixedCosts>(), noise);
  std::vector<TimeNs> forward_order, backward_order(64);
  for (int j = 0; j < 64; ++j) forward_order.push_back(a.duration(forward(j % 4, j)));
  for (int j = 63; j >= 0; --j) backward_order[j] = b.duration(forward(j % 4, j));
  EXPECT_EQ(forward_order, backward_order);
  const NoisyCosts other(std::make_unique<FixedCosts>(), {43, 0.3, 0.3, 0.05, 5.0});
  int differ = 0;
  for (int j = 0; j < 64; ++j) differ += other.duration(forward(j % 4, j)) != forward_order[j];
  EXPECT_GE(differ, 60);
  EXPECT_EQ(a.activation_bytes(0), 7);
  EXPECT_EQ(a.weight_grad_activation_bytes(0), 3);
  EXPECT_EQ(a.transfer_bytes(0), 5);
}

TEST(NoisyCosts, WithoutNoiseTheBaseAndWithCertainStragglersTheFactor) {
  const NoisyCosts none(std::make_unique<FixedCosts>(), {7, 0, 0, 0, 5.0});
  const NoisyCosts always(std::make_unique<FixedCosts>(), {7, 0, 0, 1.0, 5.0});
  for (int j = 0; j < 16; ++j) {
    EXPECT_EQ(none.duration(backward(1, j)), 2'000'000);  // B is kind 1: 2 ms
    EXPECT_EQ(always.duration(backward(1, j)), 10'000'000);
  }
  // Stage speeds: one factor per stage, shared by all its ops.
  const NoisyCosts speeds(std::make_unique<FixedCosts>(), {7, 0, 0.5, 0, 1.0});
  for (int s = 0; s < 4; ++s) {
    const double f = speeds.stage_speed_factor(s);
    EXPECT_EQ(speeds.duration(forward(s, 0)), std::llround(1e6 * f));
    EXPECT_EQ(speeds.duration(forward(s, 9)), std::llround(1e6 * f));
  }
  EXPECT_NE(speeds.stage_speed_factor(0), speeds.stage_speed_factor(1));
}

}  // namespace
}  // namespace pipesim
