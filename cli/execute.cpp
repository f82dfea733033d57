#ifdef PIPESIM_HAS_EXECUTOR
#include "cli/execute.h"

#include <algorithm>
#include <map>

#include "cli/simulation.h"
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
    run.result = executor::execute_replay(plan, *costs, *comm, setup, options.observer);
  } else {
    executor::ThreadsTransport transport(layout.devices);
    run.result = executor::execute_real(plan, setup, transport);
  }
  return run;
}

namespace {

double mean_loss_of_batch(const std::vector<double>& losses, int batch, int m) {
  double sum = 0;
  for (int j = batch * m; j < (batch + 1) * m; ++j) sum += losses[j];
  return sum / m;
}

}  // namespace

nlohmann::json execution_summary(const ExecutedSchedule& run) {
  const auto& ops = run.result.ops;
  TimeNs first_start = ops.empty() ? 0 : ops.front().start_ns;
  TimeNs last_end = first_start;
  std::vector<Bytes> peak(run.spec.devices, 0);
  std::map<std::pair<int, int>, int> drift;  // (stage, mb) -> v_B - v_F
  for (const executor::ExecutedOp& op : ops) {
    first_start = std::min(first_start, op.start_ns);
    last_end = std::max(last_end, op.end_ns);
    peak[op.device] = std::max(peak[op.device], op.live_activation_bytes);
    const auto key = std::pair{op.action.stage, op.action.microbatch};
    if (op.action.kind == OpKind::F) drift[key] -= op.weight_version;
    if (op.action.kind == OpKind::B || op.action.kind == OpKind::I) drift[key] += op.weight_version;
  }
  std::vector<int> max_drift(run.stages, 0);
  for (const auto& [key, d] : drift) max_drift[key.first] = std::max(max_drift[key.first], d);
  const int m = run.spec.microbatches;
  nlohmann::json out;
  out["schedule"] = run.schedule;
  out["mode"] = run.mode == ExecuteMode::kReplay ? "replay" : "real";
  out["devices"] = run.spec.devices;
  out["stages"] = run.stages;
  out["microbatches"] = m;
  out["batches"] = run.spec.batches;
  out["ops"] = ops.size();
  out["makespan_ns"] = last_end - first_start;
  out["timing_valid"] = run.result.timing_valid;
  out["first_batch_mean_loss"] = mean_loss_of_batch(run.result.losses, 0, m);
  out["last_batch_mean_loss"] = mean_loss_of_batch(run.result.losses, run.spec.batches - 1, m);
  out["max_drift_per_stage"] = max_drift;
  out["peak_live_activation_bytes_per_device"] = peak;
  return out;
}

}  // namespace pipesim
#endif
