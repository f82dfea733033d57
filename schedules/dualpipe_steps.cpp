#include "schedules/dualpipe_steps.h"

#include <deque>

namespace pipesim {

std::vector<DualPipeStep> dualpipe_steps(int half, int position, int per_direction, bool turning) {
  const int p = position;
  std::vector<DualPipeStep> steps;
  const auto op = [&](OpKind kind, int phase) { steps.push_back({kind, phase, false}); };
  // F of one phase in one slot with the full B of the other.
  const auto f_with_b = [&](int forward_phase) {
    steps.push_back({OpKind::F, forward_phase, true});
    op(OpKind::B, 1 - forward_phase);
  };
  for (int k = 0; k < 2 * (half - 1 - p); ++k) op(OpKind::F, 0);
  for (int k = 0; k < p + 1; ++k) {
    op(OpKind::F, 0);
    op(OpKind::F, 1);
  }
  for (int k = 0; k < half - 1 - p; ++k) {
    op(OpKind::I, 1);
    op(OpKind::W, 0);
    op(OpKind::F, 1);
  }
  for (int k = 0; k < per_direction - 2 * half + p + 1; ++k) {
    if (k == 0 && turning) {  // phase 1's first backward follows its own forward here
      op(OpKind::F, 0);
      op(OpKind::B, 1);
    } else {
      f_with_b(0);
    }
    f_with_b(1);
  }
  for (int k = 0; k < half - 1 - p; ++k) {
    op(OpKind::B, 1);
    f_with_b(1);
  }
  bool split = false;
  const int middle = (p + 1) / 2;
  for (int k = 0; k < p + 1; ++k) {
    if (k == middle && p % 2 == 1) split = true;
    op(split ? OpKind::I : OpKind::B, 1);
    if (k == middle && p % 2 == 0) split = true;
    op(split ? OpKind::I : OpKind::B, 0);
  }
  for (int k = 0; k < half - 1 - p; ++k) {
    op(OpKind::W, 0);
    op(split ? OpKind::I : OpKind::B, 0);
  }
  for (int k = 0; k < p + 1; ++k) op(OpKind::W, 0);
  return steps;
}

std::vector<Action> dualpipe_actions(const std::vector<DualPipeStep>& steps, const DualPipePhases& phases) {
  std::vector<Action> actions;
  std::array<int, 2> forwards{0, 0};
  std::array<int, 2> backwards{0, 0};
  std::deque<Action> queued_weight_grads;  // the Ws of the Is run so far, oldest first
  const auto microbatch = [&](int phase, int count) {
    return phases.first_microbatch[phase] + count * phases.microbatch_stride;
  };
  for (const DualPipeStep& step : steps) {
    const int stage = phases.stage_of_phase[step.phase];
    switch (step.kind) {
      case OpKind::F:
        actions.push_back(forward(stage, microbatch(step.phase, forwards[step.phase]++)));
        actions.back().fused_with_next = step.fused_with_next;
        break;
      case OpKind::B:
        actions.push_back(backward(stage, microbatch(step.phase, backwards[step.phase]++)));
        break;
      case OpKind::I:
        actions.push_back(backward_input(stage, microbatch(step.phase, backwards[step.phase]++)));
        queued_weight_grads.push_back(backward_weight(stage, actions.back().microbatch));
        break;
      case OpKind::W:
        if (queued_weight_grads.empty()) break;
        actions.push_back(queued_weight_grads.front());
        queued_weight_grads.pop_front();
        break;
      case OpKind::U:
        break;
    }
  }
  return actions;
}

}  // namespace pipesim
