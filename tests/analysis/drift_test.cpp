// Drift, staleness, live weight versions and in-flight counts derived from hand-written traces, and the
// engine's weight-version semantics they rest on.
#include "analysis/drift.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "schedules/schedule.h"
#include "sim/comm_model.h"
#include "sim/engine/engine.h"

namespace pipesim {
namespace {

OpRecord op(OpKind kind, int microbatch, int version, TimeNs start, TimeNs end) {
  return {{kind, false, 0, microbatch}, 0, version, start, end};
}

// One stage, three microbatches, a step after every backward, 1F1B order with two in flight:
//   F0 [0,1) F1 [1,2) B0 [2,4) U [4,5) F2 [5,6) B1 [6,8) U [8,9) B2 [9,11) U [11,12)
// `b1`, `b2`: the versions B1 and B2 read (stashed: 0 and 1; current weights: 1 and 2).
RunTrace one_stage_trace(int b1, int b2) {
  RunTrace t;
  t.layout = PipelineLayout::linear(1);
  t.total_microbatches = 3;
  t.ops = {op(OpKind::F, 0, 0, 0, 1), op(OpKind::F, 1, 0, 1, 2),   op(OpKind::B, 0, 0, 2, 4),
           op(OpKind::U, 0, 0, 4, 5), op(OpKind::F, 2, 1, 5, 6),   op(OpKind::B, 1, b1, 6, 8),
           op(OpKind::U, 1, 1, 8, 9), op(OpKind::B, 2, b2, 9, 11), op(OpKind::U, 2, 2, 11, 12)};
  t.makespan_ns = 12;
  return t;
}

TEST(Drift, StashedBackwardsHaveNoDriftButStalenessAndTwoLiveVersions) {
  const DriftReport r = compute_drift(one_stage_trace(0, 1), {1, 3});
  ASSERT_EQ(r.stages.size(), 1u);
  const StageDrift& d = r.stages[0];
  EXPECT_EQ(d.drift, (std::vector<int>{0, 0, 0}));
  // mb0 is applied by the U at 4 (version 0); mb1's B ends at 8 when the U reading version 1 starts: τ = 1.
  EXPECT_EQ(d.staleness, (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(d.staleness_max, 1);
  EXPECT_DOUBLE_EQ(d.staleness_mean, 1.0);  // window: microbatches 1 and 2
  // v0 lives [0, 8) (B1 reads it), v1 [5, 11), v2 [9, ...): two at once from 5 and from 9.
  EXPECT_EQ(d.weight_versions_max, 2);
  const std::vector<std::tuple<TimeNs, int, int>> expected = {{0, 0, 1}, {5, 1, 2},  {8, 1, 1},
                                                              {9, 2, 2}, {11, 2, 1}, {12, 3, 1}};
  ASSERT_EQ(d.versions.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ(std::tie(d.versions[k].time_ns, d.versions[k].current_version, d.versions[k].live_versions),
              expected[k])
        << "sample " << k;
  }
  EXPECT_EQ(d.in_flight_max, 2);
}

TEST(Drift, CurrentWeightBackwardsDriftByTheStepsSinceTheirForward) {
  const DriftReport r = compute_drift(one_stage_trace(1, 2), {0, 3});
  const StageDrift& d = r.stages[0];
  EXPECT_EQ(d.drift, (std::vector<int>{0, 1, 1}));
  EXPECT_EQ(d.drift_max, 1);
  EXPECT_DOUBLE_EQ(d.drift_mean, 2.0 / 3.0);
  EXPECT_EQ(d.drift_histogram, (std::vector<long>{1, 2}));
  EXPECT_EQ(d.staleness, d.drift);  // applied to the version the backward read
  EXPECT_EQ(d.weight_versions_max, 1);
}

TEST(Drift, SplitBackwardTakesTheLaterWeightGradientAndUnappliedGradientsHaveNoStaleness) {
  RunTrace t;
  t.layout = PipelineLayout::linear(1);
  t.total_microbatches = 2;
  // I0 reads v0; W0 runs after a step and reads v1. mb1's gradient is never applied (no U after it).
  t.ops = {op(OpKind::F, 0, 0, 0, 1), op(OpKind::F, 1, 0, 1, 2), op(OpKind::I, 0, 0, 2, 3),
           op(OpKind::U, 0, 0, 3, 4), op(OpKind::W, 0, 1, 4, 5), op(OpKind::I, 1, 1, 5, 6),
           op(OpKind::W, 1, 1, 6, 7)};
  t.makespan_ns = 7;
  const DriftReport report = compute_drift(t, {0, 2});
  const StageDrift& d = report.stages[0];
  EXPECT_EQ(d.drift, (std::vector<int>{1, 1}));
  EXPECT_EQ(d.staleness, (std::vector<int>{-1, -1}));  // W0 ends after the only U started
  EXPECT_EQ(d.staleness_max, 0);
  EXPECT_EQ(d.in_flight_max, 2);  // I ends the in-flight span, W does not
}

TEST(Drift, InconsistentStepRecordsAreRejected) {
  RunTrace t = one_stage_trace(0, 1);
  t.ops[6].weight_version = 5;  // the second U claims to read version 5
  EXPECT_THROW(compute_drift(t, {0, 3}), ScheduleError);
}

// A one-device policy that runs F0, F1, U, F2 ... from a fixed list, for the engine's version rules.
ExecutionPlan one_device_plan(std::vector<Action> actions, int microbatches, ForwardReads reads) {
  ExecutionPlan plan = plan_from_lists(PipelineLayout::linear(1), {std::move(actions)}, microbatches);
  plan.forward_reads = reads;
  return plan;
}

class DriftUnitCosts final : public CostModel {
 public:
  TimeNs duration(const Action&) const override { return 1; }
  Bytes activation_bytes(int) const override { return 1; }
  Bytes weight_grad_activation_bytes(int) const override { return 0; }
  Bytes transfer_bytes(int) const override { return 0; }
};

TEST(EngineVersions, PinnedForwardsReadTheirVersionAndWaitForIt) {
  // Period 2, lag 1: microbatches 0-3 read version 0, 4-5 version 1 even though version 2 exists by then.
  ExecutionPlan plan = one_device_plan(
      {forward(0, 0), forward(0, 1), backward(0, 0), backward(0, 1), optimizer_step(0, 0, false),
       forward(0, 2), forward(0, 3), backward(0, 2), backward(0, 3), optimizer_step(0, 1, false),
       forward(0, 4), backward(0, 4), forward(0, 5), backward(0, 5)},
      6, ForwardReads{.period_microbatches = 2, .lag_versions = 1, .lag_of_stage = {}});
  plan.backward_reads = BackwardReads::kStashedWeights;
  FixedLatencyComm comm({0});
  const RunTrace trace = simulate(plan, DriftUnitCosts(), comm);
  for (const OpRecord& r : trace.ops) {
    if (r.action.kind == OpKind::U) continue;
    EXPECT_EQ(r.weight_version, std::max(r.action.microbatch / 2 - 1, 0)) << describe(r.action);
  }
}

TEST(EngineVersions, AForwardWaitingForAVersionNoStepMakesIsADeadlockNamingIt) {
  ExecutionPlan plan =
      one_device_plan({forward(0, 0), backward(0, 0), forward(0, 1), backward(0, 1)}, 2,
                      ForwardReads{.period_microbatches = 1, .lag_versions = 0, .lag_of_stage = {}});
  FixedLatencyComm comm({0});
  try {
    simulate(plan, DriftUnitCosts(), comm);
    FAIL() << "expected a deadlock";
  } catch (const DeadlockError& e) {
    EXPECT_NE(std::string(e.what()).find("version 1 of stage 1's weights"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pipesim
