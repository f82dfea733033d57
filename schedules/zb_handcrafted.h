#pragma once
// The list shape shared by the Zero Bubble handcrafted schedules ZB-H1 and ZB-H2 (Qi et al., arXiv
// 2401.10241, section 3.1): B is split into I (input gradient, on the critical path between stages) and
// W (weight gradient, needed by nobody but the optimizer), and W is moved to where the device would idle.
#include "schedules/schedule.h"

namespace pipesim {

struct ZbDeviceShape {
  int warmup_forwards = 1;   // forwards before the first I (the device's peak in-flight count)
  int deferred_weights = 0;  // how many steps each W trails its I
};

// One batch (microbatches 0..m-1) on a device holding the single stage `stage`:
//   F_0 .. F_{w-1}                       warm-up, w = min(warmup_forwards, m)
//   for k = 0..m-1:  I_k, W_{k-d}, F_{k+w}  (each only if it exists: k-d >= 0, k+w < m)
//   W_{m-d} .. W_{m-1}                   the deferred weight gradients fill the tail
// with d = deferred_weights. The lists of a pipeline cannot deadlock, for any m >= 1, as long as
// warmup_forwards does not grow from a stage to the next: each F that stage s+1 lists before its I_k,
// stage s lists before its own I_k, so the I chain of microbatch k never waits on a later entry.
ActionList zb_handcrafted_list(int stage, int microbatches, const ZbDeviceShape& shape);

// The whole pipeline's lists (one stage per device) of ZB-H1, ZB-H2 (shapes in zb_h1.cpp, zb_h2.cpp), and of
// 1F1B's order with I and W in place of B (each W right after its I: 1F1B's timeline and memory, except that
// the gradient leaves when I ends).
DeviceActionLists zb_h1_lists(int devices, int microbatches);
// ZB-H1's and ZB-H2's lists built as runs (what their plans hold: a few runs per device at any m).
std::vector<ActionRuns> zb_h1_runs(int devices, int microbatches);
std::vector<ActionRuns> zb_h2_runs(int devices, int microbatches);
// ZB-V's lists (schedules/zb_v.cpp): V placement, device r runs stages r and 2N-1-r, PyTorch's fixed order.
DeviceActionLists zb_v_lists(int devices, int microbatches);

// DualPipeV's per-device order (schedules/dualpipe_v.cpp), m >= 2N: fused F&B pairs marked on their F.
DeviceActionLists dualpipe_v_lists(int devices, int microbatches);
std::vector<ActionRuns> dualpipe_v_runs(int devices, int microbatches);  // the same, as runs
// DualPipe's per-device order (schedules/dualpipe.cpp) on the bidirectional layout, N even, m even >= 2N.
DeviceActionLists dualpipe_lists(int devices, int microbatches);
std::vector<ActionRuns> dualpipe_runs(int devices, int microbatches);  // the same, as runs
// Chimera's per-device order (schedules/chimera.cpp) on the bidirectional layout, N even, m a multiple of N.
DeviceActionLists chimera_lists(int devices, int microbatches);
std::vector<ActionRuns> chimera_runs(int devices, int microbatches);  // the same, as runs
DeviceActionLists zb_h2_lists(int devices, int microbatches);
DeviceActionLists one_f_one_b_split_lists(int devices, int microbatches);

}  // namespace pipesim
