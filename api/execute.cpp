#ifdef PIPESIM_HAS_EXECUTOR
#include "api/execute.h"

#include <algorithm>

#include "api/resolve.h"
#include "api/simulation.h"
#include "executor/mpi_transport.h"
#include "executor/real_executor.h"
#include "executor/replay_executor.h"
#include "schedules/registry.h"
#include "sim/errors.h"

namespace pipesim {

executor::TrainingSetup training_setup_for(const executor::TrainingSetup& given, const Scenario& scenario,
                                           const PipelineLayout& layout) {
  executor::TrainingSetup setup = given;
  setup.microbatches_per_batch = scenario.microbatches;
  setup.shape.blocks = executor::blocks_for_stages(setup.shape, layout.stages);
  return setup;
}

ExecutedSchedule execute_schedule(const Scenario& scenario_as_given, const ScheduleRequest& request,
                                  const ExecuteOptions& options) {
  // The run the simulator would build (api/resolve.h), without the cost checks: the executor measures its own
  // costs, so a scenario that gives only F and B still trains a schedule that splits I and W.
  ResolveOptions resolve_options;
  resolve_options.check = false;
  resolve_options.task_graph = false;
  ResolvedRun resolved = resolve(scenario_as_given, request, resolve_options);
  const Scenario& scenario = resolved.scenario;
  const PipelineLayout& layout = resolved.layout;
  ExecutedSchedule run;
  run.schedule = resolved.schedule->label();
  run.mode = options.mode;
  run.spec = resolved.spec;
  resolved.schedule->check(run.spec);
  run.stages = layout.stages;
  const executor::TrainingSetup setup = training_setup_for(options.setup, scenario, layout);
  const std::unique_ptr<CostModel>& costs = resolved.costs;
  ExecutionPlan plan = resolved.schedule->plan(run.spec, *costs);
  if (options.mode == ExecuteMode::kReplay) {
    const std::unique_ptr<CommModel> comm = resolved.make_comm();
    run.result = executor::execute_replay(plan, *costs, *comm, setup, options.observer);
  } else if (options.transport == ExecuteTransport::kMpi) {
#ifdef PIPESIM_HAS_MPI
    executor::MpiTransport transport(layout.devices);
    run.result =
        executor::gather_on_first_rank(executor::execute_real(plan, setup, transport), layout, transport);
#else
    throw InputError("--transport mpi: this pipesim was built without MPI (install mpich and libmpich-dev)");
#endif
  } else {
    executor::ThreadsTransport transport(layout.devices);
    run.result = executor::execute_real(plan, setup, transport);
  }
  return run;
}

}  // namespace pipesim
#endif
