#pragma once
// The discrete-event engine. It knows dependencies (docs/design.md §2), devices with one compute stream,
// transfers and weight versions; it knows no schedule. Same-instant rule: every op end and every arrival at
// time t is processed before any device picks its next op at t; devices then choose in index order, so runs
// are deterministic.
#include "sim/comm_model.h"
#include "sim/cost_model.h"
#include "sim/policy.h"
#include "sim/trace.h"

namespace pipesim {

// Runs the plan to completion. Throws DeadlockError when ops remain but nothing can progress, and
// ScheduleError when a policy breaks the engine's rules.
RunTrace simulate(ExecutionPlan& plan, const CostModel& costs, CommModel& comm);

}  // namespace pipesim
