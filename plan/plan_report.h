#pragma once
// `pipesim plan`'s output: what was searched and how much of it was simulated, the best synchronous
// configurations (weights never stale) and then the best asynchronous ones, why the runner-up lost, and the
// assumptions behind the figures. plan_csv: every candidate with its fate and figures.
#include <string>

#include "io/scenario.h"
#include "plan/plan.h"

namespace pipesim {

std::string format_plan(const Scenario& scenario, const PlanOptions& options, const PlanResult& result);

// Why `runner_up` ranks below `best`: its tokens/s/GPU against the best's, split into the busiest GPU's work
// per step and its idle share, and the settings where the two differ.
std::string runner_up_text(const PlanRow& best, const PlanRow& runner_up);

std::string plan_csv(const PlanResult& result);

}  // namespace pipesim
