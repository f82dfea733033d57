#pragma once
// Replay mode: real numerics and real weight versions, with the op order and timestamps of the engine's
// virtual clocks. The engine drives the schedule's own DevicePolicy objects (schedule->plan(...)) over its
// LocalView, so the order is the simulator's by construction; the executor then runs every op of that
// trace, in start order, on real tensors. Start order respects every dependency (an op starts only after
// its inputs' producers ended), so the numerics are those a real run in that order computes. The versions
// the executor records come from its own weight store (current copy, stashes, pinned 2BW versions), not from
// the trace, so comparing the two checks the executor against the simulator.
#include <cstdint>
#include <vector>

#include "executor/training_setup.h"
#include "sim/comm_model.h"
#include "sim/cost_model.h"
#include "sim/policy.h"
#include "sim/trace.h"

namespace pipesim::executor {

struct ExecutedOp {
  Action action;
  int device = 0;
  int weight_version = 0;                 // of the weights the op read (U: the version before it)
  std::uint64_t weights_fingerprint = 0;  // of those weights; W reads none and records the I's copy
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  Bytes live_activation_bytes = 0;  // on the op's device, after the op
};

struct ExecutionResult {
  RunTrace trace;  // the simulator's run that gave the order and times
  std::vector<ExecutedOp> ops;
  std::vector<std::vector<float>> final_parameters;  // per (virtual) stage
  std::vector<double> losses;                        // per global microbatch
};

// Plans nothing itself: `plan` comes from schedule->plan(spec, costs). Throws ScheduleError when an op finds
// an input or weight version missing (which would mean the trace broke a dependency).
ExecutionResult execute_replay(ExecutionPlan& plan, const CostModel& costs, CommModel& comm,
                               const TrainingSetup& setup);

}  // namespace pipesim::executor
