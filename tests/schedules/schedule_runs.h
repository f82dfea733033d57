#pragma once
// A registered schedule run the way the api runs a scenario's entry (api/resolve.cpp, api/simulation.cpp's
// recorded path), with the pipeline, the costs (tests/sim/plans.h, tests/sim/stage_table_costs.h) and the
// comm stated directly: the spec and its sync rule, the comm model that cost-aware schedules plan with, one
// plan run by the engine for exactly its batches, or the run length of sim/steady_state.h. For the tests of
// the schedules and of what reads their traces, without a scenario or the api.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedules/pytorch_csv.h"
#include "schedules/registry.h"
#include "schedules/schedule.h"
#include "sim/comm_model.h"
#include "sim/engine/engine.h"
#include "sim/steady_state.h"
#include "tests/sim/plans.h"

namespace pipesim::test {

// One run of a registered schedule (or "csv:PATH"), as a scenario with `pipeline: {stages, microbatches,
// batches}`, explicit costs and its comm states it.
struct ScheduleRunSpec {
  ScheduleRunSpec() = default;
  ScheduleRunSpec(std::string schedule, int n, int m, int b = 1)
      : name(std::move(schedule)), devices(n), microbatches(m), batches(b) {}
  ScheduleRunSpec& param(const std::string& key, const std::string& value) {
    params[key] = value;
    return *this;
  }
  ScheduleRunSpec& with_sync(OptimizerSync s) {
    sync = s;
    return *this;
  }
  ScheduleRunSpec& comm_ms(double ms) {
    latency_ns = ms_to_ns(ms);
    return *this;
  }
  ScheduleRunSpec& with_comm(std::function<std::unique_ptr<CommModel>(int devices)> make) {
    comm = std::move(make);
    return *this;
  }

  std::string name;
  int devices = 1;       // N: the scenario's stages
  int microbatches = 1;  // m
  int batches = 1;       // the scenario's `batches`: run_schedule_steady's minimum, unless fixed_batches
  std::map<std::string, std::string> params;
  // optimizer.sync: a synchronous schedule's choice (an asynchronous one keeps its own, kNone, as the api
  // does); unset, the schedule's default.
  std::optional<OptimizerSync> sync;
  TimeNs latency_ns = 0;  // costs.comm_ms: every transfer's fixed latency, seen by the plan and the engine
  // Another comm model for the layout's devices (per-device latencies, the link model, blocking comm), seen
  // by the plan and the engine; replaces latency_ns.
  std::function<std::unique_ptr<CommModel>(int devices)> comm;
  bool fixed_batches = false;  // SimulationOptions::fixed_batches (run_schedule_steady)
  bool exact_costs = true;     // false for noisy costs: one run, no doubling of the window
};

// A run of N devices, m microbatches and `batches` batches with these parameters, the rest by default.
inline ScheduleRunSpec schedule_run(std::string name, int devices, int microbatches, int batches,
                                    std::map<std::string, std::string> params = {}) {
  ScheduleRunSpec run(std::move(name), devices, microbatches, batches);
  run.params = std::move(params);
  return run;
}

inline std::unique_ptr<Schedule> make_test_schedule(const ScheduleRunSpec& run) {
  ScheduleParams schedule_params("test.yaml");
  for (const auto& [key, value] : run.params) schedule_params.set(key, value);
  return make_schedule(run.name, schedule_params);
}

// How many stages the schedule's layout puts on each device (UniformStageCosts::over_chunks).
inline int chunks_per_device(const ScheduleRunSpec& run) {
  return make_test_schedule(run)->layout(run.devices).chunks_per_device;
}

// The spec the schedule plans with (api/resolve.cpp's pipeline_spec_for), checked by the schedule: throws
// InputError for a shape it refuses.
inline PipelineSpec schedule_spec(const Schedule& schedule, const ScheduleRunSpec& run) {
  PipelineSpec spec;
  spec.devices = run.devices;
  spec.microbatches = run.microbatches;
  spec.batches = run.batches;
  spec.sync = schedule.default_sync() == OptimizerSync::kNone ? OptimizerSync::kNone
                                                              : run.sync.value_or(schedule.default_sync());
  spec.exact_costs = run.exact_costs;
  const int devices = schedule.layout(run.devices).devices;
  spec.make_comm = [devices, comm = run.comm, latency_ns = run.latency_ns]() -> std::unique_ptr<CommModel> {
    if (comm) return comm(devices);
    return std::make_unique<FixedLatencyComm>(
        std::vector<TimeNs>(static_cast<std::size_t>(devices), latency_ns));
  };
  schedule.check(spec);
  return spec;
}

// The schedule, its spec for run.batches and its layout; throws InputError for a shape it refuses.
struct PreparedSchedule {
  std::unique_ptr<Schedule> schedule;
  PipelineSpec spec;
  PipelineLayout layout;
};

inline PreparedSchedule prepare_schedule(const ScheduleRunSpec& run) {
  PreparedSchedule p;
  p.schedule = make_test_schedule(run);
  p.layout = p.schedule->layout(run.devices);
  p.spec = schedule_spec(*p.schedule, run);
  return p;
}

// The schedule's plan for exactly run.batches on `costs`, run by the engine on the run's comm.
inline RunTrace run_schedule_plan(const ScheduleRunSpec& run, const CostModel& costs) {
  const PreparedSchedule p = prepare_schedule(run);
  ExecutionPlan plan = p.schedule->plan(p.spec, costs);
  return simulate(plan, costs, *p.spec.make_comm());
}

// N devices, m microbatches per batch, exactly `batches` batches, the schedule's own optimizer sync unless
// `sync` is given; no comm latency.
inline RunTrace run_schedule_plan(const std::string& name, int devices, int microbatches, int batches,
                                  const CostModel& costs,
                                  const std::map<std::string, std::string>& params = {},
                                  std::optional<OptimizerSync> sync = std::nullopt) {
  ScheduleRunSpec run(name, devices, microbatches, batches);
  run.params = params;
  run.sync = sync;
  return run_schedule_plan(run, costs);
}

// The engine's runs of the schedule until its window is in steady state (run.batches a minimum), or exactly
// run.batches with fixed_batches: what the api's recorded path runs.
inline SteadyRun run_schedule_steady(const ScheduleRunSpec& run, const CostModel& costs) {
  PreparedSchedule p = prepare_schedule(run);
  RunLengthOptions length;
  length.microbatches_per_batch = run.microbatches;
  length.min_batches = run.batches;
  length.hint = p.schedule->steady_state(p.spec);
  length.exact_repeat = run.exact_costs;
  length.fixed_length = run.fixed_batches;
  length.run_name = run.name;
  return simulate_steady_state(length, [&](int batches) {
    p.spec.batches = batches;
    ExecutionPlan plan = p.schedule->plan(p.spec, costs);
    return simulate(plan, costs, *p.spec.make_comm());
  });
}

// The schedule's lists for one batch as PyTorch's CSV, as `pipesim export` writes them
// (api/schedule_export.h); fails the test for a schedule that decides at run time.
inline std::string static_order_csv(const ScheduleRunSpec& run, const CostModel& costs) {
  const std::unique_ptr<Schedule> schedule = make_test_schedule(run);
  const auto* static_schedule = dynamic_cast<const StaticSchedule*>(schedule.get());
  if (static_schedule == nullptr) {
    ADD_FAILURE() << run.name << " has no static lists";
    return {};
  }
  ScheduleRunSpec one_batch = run;
  one_batch.batches = 1;
  return format_pytorch_csv(static_schedule->batch_actions(schedule_spec(*schedule, one_batch), costs));
}

}  // namespace pipesim::test
