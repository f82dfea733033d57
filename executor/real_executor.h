#pragma once
// Real mode: one worker thread per device, running concurrently. Each asks its device's DevicePolicy (the
// very objects of schedule->plan(...)) for the next op through a LocalView over its own state only: which
// tensors arrived, which ops of its stages are done, its weight versions and in-flight counts, and the
// transport's barrier. An op is ready under the engine's rules (docs/design.md §2). Times are the monotonic
// clock and the thread's CPU time; they mean something only when every worker has its own core.
#include "executor/execution_result.h"
#include "executor/training_setup.h"
#include "executor/transport.h"
#include "sim/policy.h"

namespace pipesim::executor {

// Runs the workers of transport.devices_here(): all of them for threads, one per rank for MPI (whose
// result then holds only that rank's ops, stages and losses until gathered).
// Throws ScheduleError when a worker fails, DeadlockError when a worker waits `stall_timeout_ms` with no
// news.
ExecutionResult execute_real(ExecutionPlan& plan, const TrainingSetup& setup, Transport& transport,
                             int stall_timeout_ms = 20000);

// The cores this process may run on (sched_getaffinity), ascending.
std::vector<int> allowed_cores();

// Ops in start order; ties keep their order.
void sort_by_start(std::vector<ExecutedOp>& ops);

}  // namespace pipesim::executor
