#include "schedules/async_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <memory>
#include <numeric>

#include "base/errors.h"

namespace pipesim {
namespace {

class AsyncStreamPolicy final : public DevicePolicy {
 public:
  AsyncStreamPolicy(int stage, int total_microbatches, int accumulation, int max_in_flight)
      : stage_(stage), total_(total_microbatches), accumulation_(accumulation), limit_(max_in_flight) {}

  std::optional<Action> next(const LocalView& view) override {
    if (step_due_) return optimizer_step(stage_, steps_, /*synchronized=*/false);
    if (next_backward_ < next_forward_ && view.is_ready(backward(stage_, next_backward_))) {
      return backward(stage_, next_backward_);
    }
    if (next_forward_ < total_ && view.in_flight(stage_) < limit_ &&
        view.is_ready(forward(stage_, next_forward_))) {
      return forward(stage_, next_forward_);
    }
    return std::nullopt;
  }

  void started(const Action& action) override {
    switch (action.kind) {
      case OpKind::F:
        ++next_forward_;
        break;
      case OpKind::B:
        ++next_backward_;
        ++since_step_;
        step_due_ = since_step_ == accumulation_ || next_backward_ == total_;
        break;
      case OpKind::U:
        step_due_ = false;
        since_step_ = 0;
        ++steps_;
        break;
      case OpKind::I:
      case OpKind::W:
        break;
    }
  }

  bool finished() const override { return next_backward_ == total_ && !step_due_; }

 private:
  int stage_;
  int total_;
  int accumulation_;
  int limit_;
  int next_forward_ = 0;
  int next_backward_ = 0;
  int since_step_ = 0;  // backwards since the last optimizer step
  int steps_ = 0;
  bool step_due_ = false;
};

}  // namespace

std::vector<int> one_f_one_b_limits(int stages) {
  std::vector<int> limits(stages);
  for (int s = 0; s < stages; ++s) limits[s] = stages - s;
  return limits;
}

int ceil_div(int numerator, int a) {
  return (numerator + a - 1) / a;
}

ExecutionPlan AsyncStreamSchedule::plan(const PipelineSpec& spec, const CostModel& /*costs*/) const {
  const AsyncStreamRule r = rule(spec);
  ExecutionPlan plan;
  plan.layout = layout(spec.devices);
  plan.total_microbatches = spec.total_microbatches();
  plan.backward_reads = r.backward_reads;
  plan.forward_reads = r.forward_reads;
  for (int d = 0; d < spec.devices; ++d) {
    plan.policies.push_back(
        std::make_unique<AsyncStreamPolicy>(d, plan.total_microbatches, r.accumulation, r.max_in_flight[d]));
  }
  return plan;
}

WeightGuarantees AsyncStreamSchedule::guarantees(const PipelineSpec& spec) const {
  const AsyncStreamRule r = rule(spec);
  const int n = spec.devices;
  const int lag = r.forward_reads.period_microbatches > 0 ? r.forward_reads.lag_versions : -1;
  WeightGuarantees g(n);
  for (int s = 0; s < n; ++s) {
    const int steps_in_flight = ceil_div(r.max_in_flight[s] - 1, r.accumulation);
    g[s].max_in_flight = r.max_in_flight[s];
    // With 1F1B's limits a saturated stage runs the L_i − 1 older backwards between a microbatch's F and B,
    // so the bounds below are reached (and the mean is exact over whole a-cycles).
    const bool one_f_one_b = r.max_in_flight[s] == n - s;
    if (r.backward_reads == BackwardReads::kCurrentWeights) {
      g[s].drift_bound = g[s].staleness_bound = steps_in_flight;
      g[s].invariant_drift_bound = ceil_div(n - 1 - s, r.accumulation);
      g[s].drift_max_reached = one_f_one_b;
      if (one_f_one_b) g[s].saturated_drift_mean = static_cast<double>(n - 1 - s) / r.accumulation;
    } else if (lag >= 0) {
      g[s].staleness_bound = g[s].steady_staleness = lag;
      g[s].weight_versions = lag + 1;
    } else {
      g[s].staleness_bound = steps_in_flight;
      g[s].weight_versions = steps_in_flight + 1;
      g[s].weight_versions_reached = one_f_one_b;
    }
  }
  return g;
}

SteadyStateHint AsyncStreamSchedule::steady_state(const PipelineSpec& spec) const {
  const AsyncStreamRule r = rule(spec);
  const int widest =
      std::max(spec.devices, *std::max_element(r.max_in_flight.begin(), r.max_in_flight.end()));
  // A stream has no batch boundary in its timing: its pattern repeats every a microbatches (one optimizer
  // step), so the window is cut between batches where that is shorter.
  return {2 * widest, r.accumulation, 2 * widest + r.accumulation};
}

std::vector<int> in_flight_limits(const std::vector<int>& given, int stages, const std::string& where) {
  std::vector<int> limits = given;
  if (limits.size() == 1) limits.assign(stages, limits.front());
  if (static_cast<int>(limits.size()) != stages) {
    throw InputError(
        fmt::format("{}: parameter 'max_in_flight': expected one value or {} (one per stage), got {}", where,
                    stages, limits.size()));
  }
  return limits;
}

}  // namespace pipesim
