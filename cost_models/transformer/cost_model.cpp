#include "cost_models/transformer/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "base/errors.h"
#include "base/value_ranges.h"

namespace pipesim {

namespace {

// The model's derived times obey the bound of computed times, its bytes the same limits as values read from
// a scenario (base/value_ranges.h), so that the engine's sums cannot overflow unchecked.
void check_derived_ranges(const std::vector<StageCosts>& stages) {
  for (size_t i = 0; i < stages.size(); ++i) {
    const StageCosts& c = stages[i];
    const std::pair<const char*, double> times[] = {
        {"forward", c.forward_s},
        {"backward (I + W)", c.backward_input_s + c.backward_weight_s},
        {"optimizer", c.optimizer_s},
        {"transfer", c.transfer_s}};
    for (const auto& [what, seconds] : times) {
      if (!computed_time_in_range(seconds * 1e9)) {
        throw InputError(
            fmt::format("model: stage {}'s {} time is {:.3g} s; expected {} (fewer layers per stage, "
                        "a smaller model or microbatch, a faster link)",
                        i + 1, what, seconds, computed_time_range_text()));
      }
    }
    const std::pair<const char*, double> bytes[] = {
        {"activation", c.activation_bytes}, {"transfer", c.transfer_bytes}, {"parameter", c.parameter_bytes}};
    for (const auto& [what, value] : bytes) {
      if (!checked_bytes(value)) {
        throw InputError(fmt::format("model: stage {}'s {} bytes are {:.3g}; expected {}", i + 1, what, value,
                                     bytes_range_text()));
      }
    }
  }
}

}  // namespace

TransformerCostModel::TransformerCostModel(const TransformerSetup& setup, double microbatch_size,
                                           const PipelineLayout& layout, const Limits& limits)
    : stages_(transformer_stage_costs(setup, microbatch_size, layout.stages, limits)),
      host_overhead_s_(setup.profile.host_overhead_us * 1e-6),
      overlap_grad_reduce_(setup.parallel.overlap_grad_reduce) {
  check_derived_ranges(stages_);
}

// Each op also pays the profile's host overhead once (the host issuing it and waiting for it; 0 when the
// profile did not measure it): B, one op, once.
TimeNs TransformerCostModel::duration(const Action& action) const {
  const StageCosts& c = stages_.at(action.stage);
  auto ns = [this](double seconds) {
    return static_cast<TimeNs>(std::llround((seconds + host_overhead_s_) * 1e9));
  };
  switch (action.kind) {
    case OpKind::F:
      return ns(c.forward_s);
    case OpKind::B:
      return ns(c.backward_input_s + c.backward_weight_s);
    case OpKind::I:
      return ns(c.backward_input_s);
    case OpKind::W:
      return ns(c.backward_weight_s);
    case OpKind::U:
      // Behind a barrier with overlap, only the reduction's exposed part is the step's (before_barrier_ns).
      if (overlap_grad_reduce_ && action.synchronized) {
        return ns(c.optimizer_s - c.gradient_reduce_s + c.gradient_reduce_exposed_s);
      }
      return ns(c.optimizer_s);
  }
  return 0;
}

TimeNs TransformerCostModel::overlapped_duration(const Action& forward, const Action& backward) const {
  const StageCosts& f = stages_.at(forward.stage);
  const StageCosts& b = stages_.at(backward.stage);
  double backward_s = 0, backward_comm_s = 0;
  switch (backward.kind) {
    case OpKind::B:
      backward_s = b.backward_input_s + b.backward_weight_s;
      backward_comm_s = b.backward_input_comm_s;
      break;
    case OpKind::I:
      backward_s = b.backward_input_s;
      backward_comm_s = b.backward_input_comm_s;
      break;
    case OpKind::W:
      backward_s = b.backward_weight_s;
      break;
    default:
      return duration(forward) + duration(backward);
  }
  const double comm_s = f.forward_comm_s + backward_comm_s;
  if (comm_s <= 0) return duration(forward) + duration(backward);  // nothing to hide: exactly the sum
  const double compute_s = f.forward_s + backward_s - comm_s;
  const double slot_s = std::max(compute_s, comm_s) + 2 * host_overhead_s_;
  return static_cast<TimeNs>(std::llround(slot_s * 1e9));
}

TimeNs TransformerCostModel::hideable_ns(const Action& action) const {
  const StageCosts& c = stages_.at(action.stage);
  const double seconds = action.kind == OpKind::F                               ? c.forward_comm_s
                         : action.kind == OpKind::B || action.kind == OpKind::I ? c.backward_input_comm_s
                                                                                : 0.0;
  if (seconds <= 0) return 0;
  // Rounded up and 1 ns more: duration (rounded to the nearest ns) less this stays below the op's compute,
  // so the ops' rounding never lifts plan's bound above the slot they share.
  return std::min(duration(action), static_cast<TimeNs>(std::ceil(seconds * 1e9)) + 1);
}

TimeNs TransformerCostModel::before_barrier_ns(const Action& step) const {
  if (!overlap_grad_reduce_ || step.kind != OpKind::U || !step.synchronized) return 0;
  return static_cast<TimeNs>(std::llround(stages_.at(step.stage).gradient_reduce_exposed_s * 1e9));
}

Bytes TransformerCostModel::activation_bytes(int stage) const {
  return computed_bytes(stages_.at(stage).activation_bytes, "a stage's activations per microbatch");
}

Bytes TransformerCostModel::weight_grad_activation_bytes(int stage) const {
  return computed_bytes(stages_.at(stage).weight_grad_activation_bytes,
                        "a stage's held weight-gradient inputs");
}

Bytes TransformerCostModel::transfer_bytes(int stage) const {
  return computed_bytes(stages_.at(stage).transfer_bytes, "a stage's transfer");
}

}  // namespace pipesim
