#pragma once
// The Zero Bubble paper's automatic scheduler (Qi et al., arXiv 2401.10241, §3.2), behind zb-1p and zb-2p.
// A greedy list scheduler: it places F, I and W ops stage by stage on a predicted timeline (the engine's
// semantics with a fixed comm latency per boundary) under a per-stage activation-memory limit:
//   warm-up      as many F as memory allows, as long as they fit before the first I's gradient arrives;
//   steady state one I and one F in turn; pending Ws fill the idle gap before an op when it is >= W, when a
//                shorter gap would raise the largest cumulative bubble of all stages, or when the next F
//                would exceed the memory limit; stage i stays at least one F ahead of stage i+1;
//   drain        leftover Ws at the end.
// Three binary choices (ZbFlags) are searched: every combination is simulated on the real engine with the
// same costs and comm, and the best kept.
#include <vector>

#include "schedules/schedule.h"

namespace pipesim {

// The heuristic's three binary hyperparameters.
struct ZbFlags {
  // Warm-up: one more F even when it ends after the first I's gradient arrives (delaying that I), instead
  // of leaving a bubble shorter than an F before it.
  bool fill_before_first_i = false;
  // Steady state: a stage >= 2 forwards ahead of the next one skips its F this round when it has a W to
  // run instead (so skipping costs no idle time).
  bool skip_forward_when_ahead = false;
  // Where a stage's cumulative bubble counts from when a short gap is judged: its first op (the paper's
  // per-stage bubble, which ranks stages by span; what matters when batches overlap) or the batch start
  // (which ranks them by finish time, so a stage that starts late counts its late start; what matters when
  // a barrier waits for the last stage).
  bool bubble_from_batch_start = false;

  static ZbFlags from_index(int index);  // bits 0, 1, 2 = the fields in declaration order
  int index() const;
};

inline constexpr int kZbFlagCombinations = 8;

// What the heuristic knows about one stage (one stage per device).
struct ZbStage {
  std::vector<TimeNs> forward_ns;  // per microbatch of one batch
  std::vector<TimeNs> input_grad_ns;
  std::vector<TimeNs> weight_grad_ns;
  Bytes activation_bytes = 0;              // M_B: held from F's start until I's end
  Bytes weight_grad_activation_bytes = 0;  // M_W: the part of M_B held on from I's end until W's end
  Bytes limit_bytes = 0;                   // activation memory the stage may hold
  TimeNs forward_send_ns = 0;              // latency of the activation sent to the next stage
  TimeNs backward_send_ns = 0;             // latency of the gradient sent to the previous stage
};

struct ZbProblem {
  int microbatches = 0;
  std::vector<ZbStage> stages;
};

// Reads durations and memory from the cost model and each boundary's latency from a fresh comm model
// (spec.make_comm; none = no latency). Each stage's limit is memory_limit * N * M_B of that stage.
ZbProblem make_zb_problem(const PipelineSpec& spec, const CostModel& costs, double memory_limit);

// One batch's per-stage lists (microbatches 0..m-1, no U) for one setting of the flags.
DeviceActionLists zb_greedy_schedule(const ZbProblem& problem, const ZbFlags& flags);

struct ZbCandidate {
  ZbFlags flags;
  DeviceActionLists lists;  // one batch
  TimeNs period_ns = 0;
  TimeNs batch_cost_ns = 0;  // the longest device span of one steady batch (the ZB paper's cost)
};

// Plans every flag combination, simulates each distinct plan with the engine until steady (however many
// batches that takes, never spec.batches, so the choice does not depend on it; spec.sync, the same costs and
// comm) and returns the best: smallest period, then smallest batch cost, then lowest flag index.
ZbCandidate zb_search(const PipelineSpec& spec, const CostModel& costs, double memory_limit);

}  // namespace pipesim
