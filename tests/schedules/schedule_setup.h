#pragma once
// A registered schedule run the way the api runs a scenario's entry (api/resolve.cpp, api/simulation.cpp's
// recorded path), with the pipeline, the costs and the comm stated directly: the spec and its sync, the comm
// model the cost-aware generators plan with, and the run length of sim/steady_state.h (the requested
// batches a minimum, or exactly those). For tests of the schedules and of what reads their traces.
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "schedules/registry.h"
#include "sim/comm_model.h"
#include "sim/engine/engine.h"
#include "sim/steady_state.h"

namespace pipesim::test {

struct ScheduleSetup {
  std::string name;
  int devices = 1;       // N: the scenario's stages
  int microbatches = 1;  // m
  int batches = 4;       // the scenario's `batches`: a minimum, or exactly these with fixed_batches
  std::map<std::string, std::string> params;
  std::optional<OptimizerSync> sync;  // optimizer.sync; asynchronous schedules keep none
  TimeNs latency_ns = 0;              // a fixed latency on every transfer (costs.comm_ms)
  // Another comm model for the layout's devices (the link model, blocking comm); replaces latency_ns.
  std::function<std::unique_ptr<CommModel>(int devices)> comm;
  bool fixed_batches = false;  // SimulationOptions::fixed_batches
  bool exact_costs = true;     // false for noisy costs: one run, no doubling of the window
};

// The setup of N devices, m microbatches and `batches` batches, the rest by default.
inline ScheduleSetup schedule_setup(std::string name, int devices, int microbatches, int batches,
                                    std::map<std::string, std::string> params = {}) {
  ScheduleSetup setup;
  setup.name = std::move(name);
  setup.devices = devices;
  setup.microbatches = microbatches;
  setup.batches = batches;
  setup.params = std::move(params);
  return setup;
}

// The schedule, its spec for setup.batches and its layout; throws InputError for a shape it refuses.
struct PreparedSchedule {
  std::unique_ptr<Schedule> schedule;
  PipelineSpec spec;
  PipelineLayout layout;
  std::function<std::unique_ptr<CommModel>()> make_comm;
};

inline PreparedSchedule prepare_schedule(const ScheduleSetup& setup) {
  PreparedSchedule p;
  ScheduleParams params("test.yaml");
  for (const auto& [key, value] : setup.params) params.set(key, value);
  p.schedule = make_schedule(setup.name, params);
  p.layout = p.schedule->layout(setup.devices);
  p.spec.devices = setup.devices;
  p.spec.microbatches = setup.microbatches;
  p.spec.batches = setup.batches;
  p.spec.sync = p.schedule->default_sync() == OptimizerSync::kNone
                    ? OptimizerSync::kNone
                    : setup.sync.value_or(p.schedule->default_sync());
  p.spec.exact_costs = setup.exact_costs;
  const int devices = p.layout.devices;
  p.make_comm = [comm = setup.comm, latency = setup.latency_ns, devices]() -> std::unique_ptr<CommModel> {
    if (comm) return comm(devices);
    return std::make_unique<FixedLatencyComm>(
        std::vector<TimeNs>(static_cast<std::size_t>(devices), latency));
  };
  p.spec.make_comm = p.make_comm;
  p.schedule->check(p.spec);
  return p;
}

// The engine's runs of the schedule until its window is in steady state (or exactly setup.batches).
inline SteadyRun run_schedule_setup(const ScheduleSetup& setup, const CostModel& costs) {
  PreparedSchedule p = prepare_schedule(setup);
  RunLengthOptions length;
  length.microbatches_per_batch = setup.microbatches;
  length.min_batches = setup.batches;
  length.hint = p.schedule->steady_state(p.spec);
  length.exact_repeat = setup.exact_costs;
  length.fixed_length = setup.fixed_batches;
  length.run_name = setup.name;
  return simulate_steady_state(length, [&](int batches) {
    p.spec.batches = batches;
    ExecutionPlan plan = p.schedule->plan(p.spec, costs);
    return simulate(plan, costs, *p.make_comm());
  });
}

}  // namespace pipesim::test
