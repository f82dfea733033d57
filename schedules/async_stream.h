#pragma once
// The rule shared by the asynchronous schedules (PipeDream, async 1F1B, PipeDream-2BW, PACI): 1F1B without a
// flush, run as a stream of microbatches. Each stage decides from its own counters only:
//   1. a due optimizer step first (after every a-th backward the stage runs, and once more at the end for a
//      partial accumulation), then
//   2. the oldest backward whose gradient has arrived, then
//   3. the next forward while fewer than L_i microbatches are in flight.
#include <string>
#include <vector>

#include "schedules/schedule.h"
#include "schedules/schedule_params.h"

namespace pipesim {

struct AsyncStreamRule {
  int accumulation = 1;            // a: backwards per optimizer step
  std::vector<int> max_in_flight;  // L_i per stage (0-based)
  BackwardReads backward_reads = BackwardReads::kCurrentWeights;
  ForwardReads forward_reads;
};

// 1F1B's in-flight limits L_i = N+1−i (1-based i): N on the first stage, 1 on the last.
std::vector<int> one_f_one_b_limits(int stages);

// ⌈numerator / a⌉ for numerator >= 0.
int ceil_div(int numerator, int a);

// A schedule that runs its rule as a stream over a linear pipeline (one stage per device).
class AsyncStreamSchedule : public Schedule {
 public:
  OptimizerSync default_sync() const override { return OptimizerSync::kNone; }
  void check(const PipelineSpec& spec) const override { rule(spec); }
  ExecutionPlan plan(const PipelineSpec& spec, const CostModel& costs) const override;
  // From the rule: with current-weight backwards Δ = τ ≤ ⌈(L_i−1)/a⌉ (checked against ⌈(N−i)/a⌉) and one
  // copy; with stashing Δ = 0, τ ≤ ⌈(L_i−1)/a⌉ and up to 1 + ⌈(L_i−1)/a⌉ copies; with versions pinned at a
  // lag, τ = lag after the first batch and lag + 1 copies.
  WeightGuarantees guarantees(const PipelineSpec& spec) const override;
  // A stream fills for 2·max(N, L_1) microbatches, repeats every a (a step per a backwards: batches only
  // cut its figures, so its window need not hold whole ones), and a window microbatch's backward and the step
  // that applies it come up to L_1 + a microbatches later.
  SteadyStateHint steady_state(const PipelineSpec& spec) const override;
  int microbatches_per_step(const PipelineSpec& spec) const override { return rule(spec).accumulation; }

  // Throws InputError when the parameters do not fit the pipeline.
  virtual AsyncStreamRule rule(const PipelineSpec& spec) const = 0;
};

// The per-stage limit a user gave as one value (every stage) or one per stage, checked against N.
std::vector<int> in_flight_limits(const std::vector<int>& given, int stages, const std::string& where);

}  // namespace pipesim
