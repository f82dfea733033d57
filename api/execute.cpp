#ifdef PIPESIM_HAS_EXECUTOR
#include "api/execute.h"

#include <algorithm>

#include "api/simulation.h"
#include "executor/real_executor.h"
#include "executor/replay_executor.h"
#include "schedules/registry.h"

namespace pipesim {

ExecutedSchedule execute_schedule(const Scenario& scenario_as_given, const ScheduleRequest& request,
                                  const ExecuteOptions& options) {
  const Scenario scenario = scenario_for(scenario_as_given, request);
  const std::unique_ptr<Schedule> schedule = make_schedule(request.name, request.params);
  ExecutedSchedule run;
  run.schedule = schedule->label();
  run.mode = options.mode;
  run.spec = pipeline_spec_for(scenario, *schedule);
  schedule->check(run.spec);
  const PipelineLayout layout = schedule->layout(scenario.stages);
  run.stages = layout.stages;
  executor::TrainingSetup setup = options.setup;
  setup.microbatches_per_batch = scenario.microbatches;
  setup.shape.blocks = std::max(setup.shape.blocks, layout.stages - 2);
  const std::unique_ptr<CostModel> costs = make_cost_model(scenario, layout);
  ExecutionPlan plan = schedule->plan(run.spec, *costs);
  if (options.mode == ExecuteMode::kReplay) {
    const std::unique_ptr<CommModel> comm = make_comm_model(scenario, layout);
    run.result = executor::execute_replay(plan, *costs, *comm, setup);
  } else {
    executor::ThreadsTransport transport(layout.devices);
    run.result = executor::execute_real(plan, setup, transport);
  }
  return run;
}

}  // namespace pipesim
#endif
