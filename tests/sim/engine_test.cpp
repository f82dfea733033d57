// Engine semantics (docs/design.md §3): same-instant processing, optimizer steps with a duration, and barrier
// versus post-validation synchronisation.
#include "sim/engine/engine.h"

#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::device_timeline;
using test::run_schedule;
using test::scenario_from_yaml;

// A run-time rule (like PACI's): run the oldest backward if it is ready, else the next forward if its input
// is there, else wait. Unlike a static list it chooses, so it sees what is ready at the instant it picks.
class BackwardFirstPolicy final : public DevicePolicy {
 public:
  BackwardFirstPolicy(int stage, int microbatches) : stage_(stage), microbatches_(microbatches) {}
  std::optional<Action> next(const LocalView& view) override {
    if (next_b_ < next_f_ && view.is_ready(backward(stage_, next_b_))) return backward(stage_, next_b_);
    if (next_f_ < microbatches_ && view.is_ready(forward(stage_, next_f_))) return forward(stage_, next_f_);
    return std::nullopt;
  }
  void started(const Action& a) override { ++(a.kind == OpKind::F ? next_f_ : next_b_); }
  bool finished() const override { return next_b_ == microbatches_; }

 private:
  int stage_, microbatches_;
  int next_f_ = 0, next_b_ = 0;
};

// N=2, 6 microbatches, F=1, B=2, zero latency. Stage 2's B0 ends at 4 exactly when stage 1's F3 ends; the
// gradient is processed before stage 1 chooses at 4, so it picks B0, not F4. The same happens at 7 (B1)
// and 10 (B2). Worked by hand:
//   stage 1: F0@0 F1@1 F2@2 F3@3 B0@4 F4@6 (B1 arrives at 7) B1@7 F5@9 B2@10, then waits: B3@13 B4@16 B5@19
//   stage 2: F0@1 B0@2 F1@4 B1@5 F2@7 B2@8 F3@10 B3@11 F4@13 B4@14 F5@16 B5@17
TEST(Engine, SameInstantArrivalIsSeenByTheChoice) {
  const int microbatches = 6;
  const PipelineLayout layout = PipelineLayout::linear(2);
  ExecutionPlan plan;
  plan.layout = layout;
  plan.total_microbatches = microbatches;
  for (int d = 0; d < 2; ++d) plan.policies.push_back(std::make_unique<BackwardFirstPolicy>(d, microbatches));
  const ExplicitCostModel costs = test::uniform_costs(layout, 1.0, 2.0);
  FixedLatencyComm comm({0, 0});
  const RunTrace trace = simulate(plan, costs, comm);
  EXPECT_EQ(device_timeline(trace, 0, 0, microbatches),
            (std::vector<std::string>{"F0@0", "F1@1", "F2@2", "F3@3", "B0@4", "F4@6", "B1@7", "F5@9", "B2@10",
                                      "B3@13", "B4@16", "B5@19"}));
  EXPECT_EQ(device_timeline(trace, 1, 0, microbatches),
            (std::vector<std::string>{"F0@1", "B0@2", "F1@4", "B1@5", "F2@7", "B2@8", "F3@10", "B3@11",
                                      "F4@13", "B4@14", "F5@16", "B5@17"}));
}

// 1F1B-flush, N=2, m=2, F=1, B=2, U=0.5 ms. One batch: stage 1 F0@0 F1@1 B0@4 B1@7 (ends 9); stage 2 F0@1
// B0@2 F1@4 B1@5 (ends 7). Both U start at the barrier at 9 and end at 9.5, so the next batch starts at 9.5.
TEST(Engine, OptimizerStepDelaysTheNextBatch) {
  const Scenario scenario = scenario_from_yaml(
      "pipeline: {stages: 2, microbatches: 2, batches: 4}\n"
      "costs: {forward_ms: 1, backward_ms: 2, optimizer_ms: 0.5}\n");
  const SimulationResult r = run_schedule(scenario, "1f1b-flush");
  EXPECT_EQ(device_timeline(r.trace, 0, 0, 2),
            (std::vector<std::string>{"F0@0", "F1@1", "B0@4", "B1@7", "U@9"}));
  EXPECT_EQ(device_timeline(r.trace, 1, 0, 2),
            (std::vector<std::string>{"F0@1", "B0@2", "F1@4", "B1@5", "U@9"}));
  EXPECT_EQ(test::start_ns(r.trace, OpKind::F, 0, 2), ms_to_ns(9.5));
  EXPECT_EQ(r.metrics.period_ns, ms_to_ns(9.5));
  // Ops of batch k read the weights after k steps.
  for (const OpRecord& op : r.trace.ops) EXPECT_EQ(op.weight_version, test::batch_of(op.action, 2));
}

// Why the optimizer cost is the heterogeneous part: in 1F1B-flush stage 1's last B depends on every other
// stage's last B, so stage 1 always reaches U last and a barrier on gradients alone changes nothing. With
// U = 0 ms on stage 1 and 3 ms on stage 2 (N=2, m=2, F=1, B=2), by hand:
//   barrier: batch 0 ends at 9; both U at 9, stage 2 busy until 12. Batch 1: stage 1 F2@9 F3@10; stage 2
//     F2@12 B2@13 F3@15 B3@16; stage 1 B2@15 B3@18, ends 20; U at 20. Batch 2 repeats the pattern 11 ms
//     later: starts 0, 9, 20, 31 -> steady period 11.
//   post-validation: stage 2's U runs 7-10 right after its last B, stage 1's at 9. Batch 1: stage 1 F2@9
//     F3@10; stage 2 F2@10 B2@11 F3@13 B3@14, U 16-19; stage 1 B2@13 B3@16, U at 18. Starts 0, 9, 18, 27
//     -> period 9.
const char* const kUnevenOptimizer =
    "pipeline: {stages: 2, microbatches: 2, batches: 4}\n"
    "costs: {forward_ms: 1, backward_ms: 2, optimizer_ms: [0, 3]}\n";

TEST(Engine, BarrierStartsEveryUTogether) {
  const SimulationResult r = run_schedule(scenario_from_yaml(kUnevenOptimizer), "1f1b-flush");
  for (int step = 0; step < 4; ++step) {
    EXPECT_EQ(test::start_ns(r.trace, OpKind::U, 0, step), test::start_ns(r.trace, OpKind::U, 1, step))
        << step;
  }
  EXPECT_EQ(test::start_ns(r.trace, OpKind::U, 1, 0), ms_to_ns(9));
  EXPECT_EQ(test::start_ns(r.trace, OpKind::U, 1, 1), ms_to_ns(20));
  EXPECT_EQ(test::start_ns(r.trace, OpKind::F, 0, 4), ms_to_ns(20));
  EXPECT_EQ(test::start_ns(r.trace, OpKind::F, 0, 6), ms_to_ns(31));
  EXPECT_EQ(r.metrics.period_ns, ms_to_ns(11));
}

TEST(Engine, PostValidationOverlapsBatches) {
  const SimulationResult r = run_schedule(scenario_from_yaml(kUnevenOptimizer), "1f1b-flush");
  const SimulationResult p =
      run_schedule(scenario_from_yaml(std::string(kUnevenOptimizer) + "optimizer: {sync: post-validation}\n"),
                   "1f1b-flush");
  EXPECT_EQ(test::start_ns(p.trace, OpKind::U, 1, 0), ms_to_ns(7));
  EXPECT_EQ(test::start_ns(p.trace, OpKind::U, 0, 0), ms_to_ns(9));
  EXPECT_EQ(test::start_ns(p.trace, OpKind::F, 1, 2), ms_to_ns(10));
  EXPECT_EQ(test::start_ns(p.trace, OpKind::F, 0, 4), ms_to_ns(18));
  EXPECT_EQ(p.metrics.period_ns, ms_to_ns(9));
  EXPECT_LT(p.metrics.period_ns, r.metrics.period_ns);
}

}  // namespace
}  // namespace pipesim
