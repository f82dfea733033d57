#pragma once
// A registered schedule's plan for a spec, run by the engine on costs the test states (tests/sim/plans.h):
// the schedules' tests without a scenario or the api.
#include <map>
#include <string>

#include "schedules/registry.h"
#include "tests/sim/plans.h"

namespace pipesim::test {

// N devices, m microbatches per batch, exactly `batches` batches, the schedule's own optimizer sync unless
// `sync` is given; no comm latency.
inline RunTrace run_schedule_plan(const std::string& name, int devices, int microbatches, int batches,
                                  const CostModel& costs,
                                  const std::map<std::string, std::string>& params = {},
                                  std::optional<OptimizerSync> sync = std::nullopt) {
  ScheduleParams schedule_params("test");
  for (const auto& [key, value] : params) schedule_params.set(key, value);
  const std::unique_ptr<Schedule> schedule = make_schedule(name, schedule_params);
  PipelineSpec spec;
  spec.devices = devices;
  spec.microbatches = microbatches;
  spec.batches = batches;
  spec.sync = sync.value_or(schedule->default_sync());
  schedule->check(spec);
  ExecutionPlan plan = schedule->plan(spec, costs);
  return run_plan(plan, costs);
}

}  // namespace pipesim::test
