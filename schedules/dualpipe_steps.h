#pragma once
// The eight-step order DeepSeek's DualPipe runs on every device, shared by `dualpipe` (two copies of the
// model in opposite directions) and `dualpipe-v` (one model folded into a V). Both see a device as running
// two pipeline directions: phase 0 is the one whose microbatches enter nearer this device, phase 1 the
// other. The steps, for a device at `position` p of `half` (p = min(r, N-1-r) in DualPipe, r in DualPipeV
// with half = N) and `per_direction` microbatches in each direction (>= 2 * half):
//   1. 2(half-1-p) forwards of phase 0;
//   2. p+1 pairs: F of phase 0, F of phase 1;
//   3. half-1-p triples: I of phase 1, the oldest queued W, F of phase 1;
//   4. per_direction-2*half+p+1 rounds: F0 fused with B1 (on a turning device the first round runs them
//      apart), then F1 fused with B0;
//   5. half-1-p rounds: B1, then F1 fused with B0;
//   6. p+1 rounds: a backward of phase 1, then of phase 0, full until the middle round and split into I
//      (W queued) from it on (odd positions switch before phase 1's, even ones after);
//   7. half-1-p rounds: the oldest queued W, then a split backward of phase 0;
//   8. the p+1 Ws still queued.
#include <array>
#include <vector>

#include "sim/action.h"

namespace pipesim {

struct DualPipeStep {
  OpKind kind = OpKind::F;  // F, B, I (its W queued) or W (the oldest queued)
  int phase = 0;            // 0 or 1; unused for W
  bool fused_with_next = false;
};

// `turning`: the device where the two directions meet (DualPipe's two middle devices, DualPipeV's last),
// whose first steady round does not overlap.
std::vector<DualPipeStep> dualpipe_steps(int half, int position, int per_direction, bool turning);

// One device's actions for those steps: phase k runs on stage stage_of_phase[k], and its j-th forward (and
// j-th backward, a B and an I alike) is microbatch first_microbatch[k] + j * microbatch_stride.
struct DualPipePhases {
  std::array<int, 2> stage_of_phase{};
  std::array<int, 2> first_microbatch{};
  int microbatch_stride = 1;
};
std::vector<Action> dualpipe_actions(const std::vector<DualPipeStep>& steps, const DualPipePhases& phases);

}  // namespace pipesim
