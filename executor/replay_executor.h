#pragma once
// Replay mode: real numerics and real weight versions, with the op order and timestamps of the engine's
// virtual clocks. The engine drives the schedule's own DevicePolicy objects (schedule->plan(...)) over its
// LocalView, so the order is the simulator's by construction; the executor then runs every op of that
// trace, in start order, on real tensors. Start order respects every dependency (an op starts only after
// its inputs' producers ended), so the numerics are those a real run in that order computes. The versions
// the executor records come from its own weight store (current copy, stashes, pinned 2BW versions), not from
// the trace, so comparing the two checks the executor against the simulator.
#include <cstdint>
#include <functional>
#include <vector>

#include "executor/execution_result.h"
#include "executor/training_setup.h"
#include "sim/comm_model.h"
#include "sim/cost_model.h"
#include "sim/policy.h"
#include "sim/trace.h"

namespace pipesim::executor {

// Plans nothing itself: `plan` comes from schedule->plan(spec, costs). Throws ScheduleError when an op finds
// an input or weight version missing (which would mean the trace broke a dependency).
// `observer`, when set, sees every op after it ran, with the worker's state (e.g. to evaluate the weights
// along the way).
class WorkerNumerics;
using ReplayObserver = std::function<void(const OpRecord&, const WorkerNumerics&)>;
ExecutionResult execute_replay(ExecutionPlan& plan, const CostModel& costs, CommModel& comm,
                               const TrainingSetup& setup, const ReplayObserver& observer = {});

}  // namespace pipesim::executor
