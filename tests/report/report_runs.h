#pragma once
// The SimulationResult the writers read (analysis/run_result.h), of a scenario with explicit costs and a
// fixed comm latency, filled below the api: the same header, steady-state run and figures as
// api/simulation.cpp's recorded path (the default: every op kept), so the report's tests read the api's
// figures without running the api. A transformer or the link model is the api's (tests/api/).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "analysis/drift.h"
#include "analysis/memory_model.h"
#include "analysis/run_result.h"
#include "cost_models/explicit_costs.h"
#include "schedules/registry.h"
#include "sim/comm_model.h"
#include "sim/engine/engine.h"
#include "sim/metrics.h"
#include "sim/steady_state.h"
#include "spec/hardware_profile.h"
#include "spec/scenario.h"
#include "tests/scenario_text.h"

namespace pipesim::test {

inline SimulationResult explicit_costs_result(const Scenario& scenario_as_given,
                                              const ScheduleRequest& request) {
  EXPECT_FALSE(scenario_as_given.transformer) << "a transformer's figures are the api's";
  EXPECT_TRUE(scenario_as_given.comm.model == CommSpec::Model::kFixedLatency &&
              !scenario_as_given.comm.blocking)
      << "only a fixed comm latency";
  const Scenario scenario = scenario_for(scenario_as_given, request);
  const std::unique_ptr<Schedule> schedule = make_schedule(request.name, request.params);
  const PipelineLayout layout = schedule->layout(scenario.stages);
  const std::vector<TimeNs> latency_ns = scenario.comm.latency_ns;
  const auto make_comm = [latency_ns] { return std::make_unique<FixedLatencyComm>(latency_ns); };
  SimulationResult r;
  r.spec.devices = scenario.stages;
  r.spec.microbatches = scenario.microbatches;
  r.spec.batches = scenario.batches;
  r.spec.sync = schedule->default_sync() == OptimizerSync::kNone
                    ? OptimizerSync::kNone
                    : scenario.sync.value_or(schedule->default_sync());
  r.spec.make_comm = make_comm;
  schedule->check(r.spec);
  const ExplicitCostModel costs(scenario.costs, layout);
  std::vector<StageStaticMemory> static_memory(layout.stages);
  if (!scenario.costs.parameter_bytes.empty()) {
    for (int stage = 0; stage < layout.stages; ++stage)
      static_memory[stage].weight_bytes =
          scenario.costs.parameter_bytes[layout.device(stage)] / layout.chunks_per_device;
  }
  // The header (api/simulation.cpp's result_header).
  r.label = schedule->label() + pipeline_label(scenario, request);
  r.schedule_label = schedule->label();
  r.schedule_name = request.name;
  r.schedule_params = request.params.resolved();
  r.virtual_stages = layout.stages;
  r.microbatch_size = scenario.samples_per_microbatch();
  r.microbatch_size_text = microbatch_size_text(scenario);
  r.seq_len = scenario.seq_len;
  r.batches_requested = scenario.batches;
  r.activation_bytes_per_microbatch.assign(layout.devices, 0);
  for (int stage = 0; stage < layout.stages; ++stage)
    r.activation_bytes_per_microbatch[layout.device(stage)] += costs.activation_bytes(stage);
  // The run length and the recorded run.
  RunLengthOptions length;
  length.microbatches_per_batch = scenario.microbatches;
  length.min_batches = scenario.batches;
  length.hint = schedule->steady_state(r.spec);
  length.run_name = r.label;
  SteadyRun steady = simulate_steady_state(length, [&](int batches) {
    r.spec.batches = batches;
    ExecutionPlan plan = schedule->plan(r.spec, costs);
    return simulate(plan, costs, *make_comm());
  });
  r.trace = std::move(steady.trace);
  r.spec.batches = steady.window.total_batches;
  r.simulations = steady.simulations;
  r.graph.critical_path_ns = r.trace.critical_path_ns;
  r.graph.critical_path = r.trace.critical_path;
  const MetricsInput input{scenario.microbatches, steady.window, scenario.samples_per_microbatch(),
                           scenario.seq_len};
  r.metrics = compute_metrics(r.trace, input);
  r.drift = compute_drift(r.trace, {steady.window.first_microbatch, steady.window.end_microbatch});
  r.memory = compute_memory(r.trace, r.drift, static_memory);
  r.guarantees = schedule->guarantees(r.spec);
  r.weight_memory_known = std::any_of(scenario.costs.parameter_bytes.begin(),
                                      scenario.costs.parameter_bytes.end(), [](Bytes b) { return b > 0; });
  if (scenario.memory_capacity_gb > 0) r.memory_capacity_bytes = scenario.memory_capacity_gb * kBytesPerGiB;
  return r;
}

// By schedule name with parameters, as tests/test_util.h's run_schedule.
inline SimulationResult explicit_costs_result(const Scenario& scenario, const std::string& name,
                                              const std::map<std::string, std::string>& params = {}) {
  ScheduleRequest request{name, ScheduleParams(kTestSource)};
  for (const auto& [key, value] : params) request.params.set(key, value);
  return explicit_costs_result(scenario, request);
}

// N stages, m microbatches, uniform F and B (ms), a fixed comm latency: tests/test_util.h's uniform_scenario.
inline Scenario uniform_explicit_scenario(int stages, int microbatches, double forward_ms, double backward_ms,
                                          double comm_ms = 0, int batches = 4) {
  return scenario_from_yaml(
      fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: {}}}\n"
                  "costs: {{forward_ms: {}, backward_ms: {}, comm_ms: {}}}\n",
                  stages, microbatches, batches, forward_ms, backward_ms, comm_ms));
}

}  // namespace pipesim::test
