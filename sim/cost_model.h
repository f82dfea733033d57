#pragma once
// What the engine asks about durations and memory. Cost models (explicit, transformer, profile-driven,
// jitter decorators) implement it; schedules never see it unless they are cost-aware generators. Its
// const calls may run on several threads at once (the Zero Bubble search scores candidates in parallel):
// an implementation keeps no mutable state.
#include "base/units.h"
#include "sim/action.h"

namespace pipesim {

class CostModel {
 public:
  virtual ~CostModel() = default;
  // Duration of one op. Deterministic: the same action always gets the same duration.
  virtual TimeNs duration(const Action& action) const = 0;
  // Whether duration() depends on nothing but the op's kind and stage (not its microbatch or step): then
  // one batch's durations serve every batch. False, the safe answer, unless a model knows better.
  virtual bool durations_by_kind_and_stage() const { return false; }
  // One slot running a forward and another microbatch's backward overlapped (Action::fused_with_next):
  // by default no overlap gain, the sum of the two.
  virtual TimeNs overlapped_duration(const Action& forward, const Action& backward) const {
    return duration(forward) + duration(backward);
  }
  // Of duration(action), the most a fused slot can hide under the other op's compute (communication on its
  // own stream): a fused pair takes at least the two ops' durations less their hideable parts, which is what
  // a lower bound of a device's work counts for a schedule that fuses (plan/plan_bounds.h). 0 by default:
  // right for a model whose slot is never shorter than the sum of its ops' compute.
  virtual TimeNs hideable_ns(const Action& /*action*/) const { return 0; }
  // Of a synchronized optimizer step's duration, the part that runs before the step's barrier: work that
  // starts as soon as the device's last op of the step ends, while other devices still compute (a stage's
  // gradient reduction over its data-parallel replicas, overlapped with the other stages' remaining work).
  // A device reaches the barrier after its steps' parts before it, back to back; each step runs the rest of
  // its duration after the barrier. 0 by default; never more than duration(step).
  virtual TimeNs before_barrier_ns(const Action& /*step*/) const { return 0; }
  // Activation bytes a forward of this stage stores per microbatch (M_B).
  virtual Bytes activation_bytes(int stage) const = 0;
  // Of those, the bytes still held after I until W runs (M_W); a full B releases everything.
  virtual Bytes weight_grad_activation_bytes(int stage) const = 0;
  // Bytes one activation (or gradient) transfer out of this stage carries.
  virtual Bytes transfer_bytes(int stage) const = 0;
};

}  // namespace pipesim
