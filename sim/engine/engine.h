#pragma once
// The discrete-event engine. It knows dependencies (docs/design.md §2), devices with one compute stream,
// transfers and weight versions; it knows no schedule. Same-instant rule: every op end and every arrival at
// time t is processed before any device picks its next op at t; devices then choose in index order, so runs
// are deterministic.
#include "sim/comm_model.h"
#include "sim/cost_model.h"
#include "sim/policy.h"
#include "sim/run_observer.h"
#include "sim/trace.h"

namespace pipesim {

// Runs the plan to completion. Throws DeadlockError when ops remain but nothing can progress, and
// ScheduleError when a policy breaks the engine's rules.
RunTrace simulate(ExecutionPlan& plan, const CostModel& costs, CommModel& comm);

// The same run, streamed: the observer is told every op, transfer, memory change, completed gradient and
// retired version as they happen, and the trace returned holds only the run's totals (no ops, transfers or
// memory samples; critical_path_ns without the path's ops; op_count). Memory stays flat in the run's length.
RunTrace simulate(ExecutionPlan& plan, const CostModel& costs, CommModel& comm, RunObserver& observer);

}  // namespace pipesim
