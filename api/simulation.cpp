#include "api/simulation.h"

#include <fmt/format.h>

#include "api/run_assertions.h"
#include "cost_models/chunk_layers.h"
#include "schedules/registry.h"
#include "sim/engine.h"
#include "sim/errors.h"
#include "sim/resource_estimate.h"

namespace pipesim {

std::unique_ptr<CostModel> make_cost_model(const Scenario& scenario, const PipelineLayout& layout) {
  if (scenario.transformer) {
    return std::make_unique<TransformerCostModel>(*scenario.transformer, scenario.samples_per_microbatch(),
                                                  layout);
  }
  return std::make_unique<ExplicitCostModel>(scenario.costs, layout);
}

namespace {

std::unique_ptr<CommModel> comm_timing_of(const CommSpec& comm, int devices) {
  if (comm.model == CommSpec::Model::kLink) {
    return std::make_unique<LinkComm>(devices, comm.bandwidth_bytes_per_ns, comm.latency_ns.at(0));
  }
  return std::make_unique<FixedLatencyComm>(comm.latency_ns);
}

std::unique_ptr<CommModel> comm_model_of(const CommSpec& comm, int devices) {
  std::unique_ptr<CommModel> timing = comm_timing_of(comm, devices);
  if (comm.blocking) return std::make_unique<BlockingComm>(std::move(timing));
  return timing;
}

}  // namespace

std::unique_ptr<CommModel> make_comm_model(const Scenario& scenario, const PipelineLayout& layout) {
  return comm_model_of(scenario.comm, layout.devices);
}

std::vector<StageStaticMemory> static_memory(const Scenario& scenario, const PipelineLayout& layout) {
  if (scenario.transformer) {
    return static_memory_of(
        transformer_stage_costs(*scenario.transformer, scenario.samples_per_microbatch(), layout.stages));
  }
  std::vector<StageStaticMemory> stages(layout.stages);
  if (scenario.costs.parameter_bytes.empty()) return stages;  // built in code without weights
  for (int stage = 0; stage < layout.stages; ++stage) {
    stages[stage].weight_bytes =
        scenario.costs.parameter_bytes[layout.device(stage)] / layout.chunks_per_device;
  }
  return stages;
}

PipelineSpec pipeline_spec_for(const Scenario& scenario, const Schedule& schedule) {
  PipelineSpec spec;
  spec.devices = scenario.stages;
  spec.microbatches = scenario.microbatches;
  spec.batches = scenario.batches;
  // Asynchronous schedules never flush, so the scenario's optimizer synchronisation does not apply to them.
  spec.sync = schedule.default_sync() == OptimizerSync::kNone
                  ? OptimizerSync::kNone
                  : scenario.sync.value_or(schedule.default_sync());
  spec.make_comm = [comm_spec = scenario.comm, devices = schedule.layout(scenario.stages).devices] {
    return comm_model_of(comm_spec, devices);
  };
  return spec;
}

SimulationResult simulate_schedule(const Scenario& scenario_as_given, const ScheduleRequest& request,
                                   const SimulationOptions& options) {
  const Scenario scenario = scenario_for(scenario_as_given, request);  // the entry's own pipeline: overrides
  const std::unique_ptr<Schedule> schedule = make_schedule(request.name, request.params);
  SimulationResult result;
  result.schedule = schedule->label();
  result.spec = pipeline_spec_for(scenario, *schedule);
  result.microbatch_size = scenario.samples_per_microbatch();
  result.schedule += pipeline_label(scenario, request);
  result.seq_len = scenario.seq_len;
  const PipelineLayout layout = schedule->layout(scenario.stages);
  try {
    schedule->check(result.spec);
    // Before anything is sized by the run: the effective pipeline (overrides, chunks, a CSV's sizes).
    check_resources({layout.devices, layout.stages, scenario.microbatches, scenario.batches,
                     options.analyze_graph, scenario.comm.model == CommSpec::Model::kLink},
                    result.schedule);
    if (scenario.transformer) {
      check_equal_chunk_layers(scenario.transformer->model.layers, scenario.transformer->split, layout);
    }
  } catch (const InputError& e) {
    // Say where the schedule was requested: the file, line and key.
    throw InputError(fmt::format("{}: {}", request.params.where(), e.what()));
  }
  if (schedule->splits_backward() && !scenario.backward_split_given) {
    throw InputError(
        fmt::format("{}: schedule '{}' splits the backward into I and W, so costs need "
                    "backward_input_ms and backward_weight_ms (not backward_ms)",
                    request.params.where(), result.schedule));
  }
  if (schedule->plans_under_memory_limit() && !scenario.weight_grad_memory_missing_where.empty()) {
    throw InputError(fmt::format(
        "{}: missing; schedule '{}' (requested at {}) orders I and W under an activation-memory "
        "limit, so the costs must state M_W, the bytes per microbatch that W still holds after I (0 up to "
        "activation_bytes; 32*s*b*h per transformer layer in 16-bit, the Zero Bubble paper's figure)",
        scenario.weight_grad_memory_missing_where, result.schedule, request.params.where()));
  }
  std::unique_ptr<CostModel> costs = make_cost_model(scenario, layout);
  if (options.decorate_costs) costs = options.decorate_costs(std::move(costs));
  result.activation_bytes_per_microbatch.assign(layout.devices, 0);
  for (int stage = 0; stage < layout.stages; ++stage) {
    result.activation_bytes_per_microbatch[layout.device(stage)] += costs->activation_bytes(stage);
  }
  result.batches_requested = scenario.batches;
  RunLengthOptions length;
  length.microbatches_per_batch = scenario.microbatches;
  length.min_batches = scenario.batches;
  length.hint = schedule->steady_state(result.spec);
  length.exact_repeat = !options.decorate_costs;
  result.spec.exact_costs = length.exact_repeat;
  length.fixed_length = options.fixed_batches;
  length.run_name = run_name(result);
  SteadyRun run = simulate_steady_state(length, [&](int batches) {
    result.spec.batches = batches;
    ExecutionPlan plan = schedule->plan(result.spec, *costs);
    return simulate(plan, *costs, *comm_model_of(scenario.comm, layout.devices));
  });
  result.trace = std::move(run.trace);
  result.spec.batches = run.window.total_batches;
  result.simulations = run.simulations;
  if (options.analyze_graph) result.graph = analyze_task_graph(result.trace);
  result.metrics = compute_metrics(
      result.trace, {scenario.microbatches, run.window, scenario.samples_per_microbatch(), scenario.seq_len});
  result.guarantees = schedule->guarantees(result.spec);
  result.drift = compute_drift(result.trace, {run.window.first_batch * scenario.microbatches,
                                              run.window.end_batch * scenario.microbatches});
  result.memory = compute_memory(result.trace, result.drift, static_memory(scenario, layout));
  if (scenario.transformer)
    result.memory_capacity_bytes = scenario.transformer->profile.memory_capacity_gb * 1e9;
  assert_physical(result, length.exact_repeat);
  return result;
}

std::vector<ScheduleRequest> requested_schedules(const Scenario& scenario) {
  if (!scenario.schedules.empty()) return scenario.schedules;
  std::vector<ScheduleRequest> all;
  for (const ScheduleInfo& info : registered_schedules()) {
    all.push_back({info.name, ScheduleParams(scenario.source)});
  }
  return all;
}

}  // namespace pipesim
