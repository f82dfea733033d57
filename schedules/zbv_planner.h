#pragma once
// The Zero Bubble authors' cost-aware ZB-V scheduler (Qi et al., arXiv 2401.10241 §6; their
// zerobubble/scheduler/zbv.py), behind zb-v-greedy. V placement: device d holds stage d (leg 0, on the way
// down) and stage 2N-1-d (leg 1, on the way back); B is split into I and W.
//
// The greedy places ops device by device on a predicted timeline (each op ends at max(device free,
// producer's end + link latency) + its duration) under a per-device activation limit:
//   warm-up   one F of leg 0 on every device; then from the last device up, more leg-0 Fs on devices 0..d
//             while device d has room for 2d+2 more and the F would end before the turn's first leg-1 F
//             reaches it, then d's first leg-1 F; then leg-0 / leg-1 Fs in turn from the bottom until each
//             device has as many Fs as the one above and more leg-1 Fs (or all m).
//   2m rounds every device puts one I (the leg whose gradient has arrived, leg 1's first), then one F (the
//   leg
//             whose input has arrived, leg 1's first); before each, Ws while one ends before the op's input
//             arrives, and one more W into a shorter gap when the gap would make this device's cumulative
//             bubble the largest (always before leg 0's I with fill_b; before an F with fill_f).
//   end       leftover Ws, oldest first.
// Its objective is the largest cumulative bubble of a device (idle time after its first F). The greedy is
// re-run with the previous run's per-device bubbles as an allowance while that improves the objective; the
// best of the four (fill_b, fill_f) settings is kept, ties to the earlier of (1,1), (1,0), (0,1), (0,0).
//
// Generalised from the reference's one cost per kind to per-device, per-leg, per-microbatch costs, memory
// and per-link latency; with uniform integer costs it places every op where the reference does (a test).
// Where the reference would fail one of its checks (possible only with uneven costs or a limit below its
// default), an op that is not ready or does not fit waits: the warm-up stops early, an F skips its round,
// and rounds go on past 2m until every op is placed; the limit still holds.
#include <optional>
#include <vector>

#include "schedules/schedule.h"

namespace pipesim {

struct ZbvDevice {
  // [kind: 0 = F, 1 = I, 2 = W][leg] -> one duration per microbatch.
  std::vector<TimeNs> duration_ns[3][2];
  // [kind][leg]: activation bytes an op adds (F: M_B) or releases (I: M_B - M_W, W: M_W; negative).
  Bytes memory_delta_bytes[3][2] = {};
  Bytes limit_bytes = 0;
  // [kind: 0 = F, 1 = I][leg]: latency of the input sent from the neighbouring device (0 where the producer
  // is on this device or there is none).
  TimeNs input_latency_ns[2][2] = {};
};

struct ZbvProblem {
  int microbatches = 0;
  std::vector<ZbvDevice> devices;
};

// Durations and memory from the cost model (stages 0..2N-1 of the V), each link's latency probed once at time
// 0 on a fresh comm model; the limit is memory_limit x N x (M_B of the device's two stages), the
// reference's default 2N f_mem at memory_limit 1 (1F1B's activation memory).
ZbvProblem make_zbv_problem(const PipelineSpec& spec, const CostModel& costs, double memory_limit);

struct ZbvFlags {
  bool fill_before_input_grad = true;  // [fill_b]
  bool fill_before_forward = true;     // [fill_f]
};

struct ZbvPlan {
  DeviceActionLists lists;  // one batch, no U
  TimeNs max_device_bubble_ns = 0;
};

// One flag setting, re-run while the allowance improves it; nullopt when no order fits the limit.
std::optional<ZbvPlan> zbv_greedy_schedule(const ZbvProblem& problem, const ZbvFlags& flags);

// The best of the four settings; InputError when none fits the memory limit.
ZbvPlan zbv_greedy_best(const ZbvProblem& problem);

}  // namespace pipesim
