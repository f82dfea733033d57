#pragma once
// A registered schedule's plan for a spec, run by the engine on costs the test states (tests/sim/plans.h):
// the schedules' tests without a scenario or the api.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "schedules/pytorch_csv.h"
#include "schedules/registry.h"
#include "schedules/schedule.h"
#include "tests/sim/plans.h"

namespace pipesim::test {

// One run of a registered schedule, as a scenario with `pipeline: {stages, microbatches, batches}` and
// explicit costs states it when run for exactly its batches (SimulationOptions::fixed_batches).
struct ScheduleRunSpec {
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

  std::string name;
  int devices;
  int microbatches;
  int batches;
  std::map<std::string, std::string> params;
  // optimizer.sync: a synchronous schedule's choice (an asynchronous one keeps its own, kNone, as the api
  // does); unset, the schedule's default.
  std::optional<OptimizerSync> sync;
  TimeNs latency_ns = 0;  // costs.comm_ms: every transfer's fixed latency, seen by the plan and the engine
};

inline std::unique_ptr<Schedule> make_test_schedule(const ScheduleRunSpec& run) {
  ScheduleParams schedule_params("test");
  for (const auto& [key, value] : run.params) schedule_params.set(key, value);
  return make_schedule(run.name, schedule_params);
}

// How many stages the schedule's layout puts on each device (UniformStageCosts::over_chunks).
inline int chunks_per_device(const ScheduleRunSpec& run) {
  return make_test_schedule(run)->layout(run.devices).chunks_per_device;
}

// The spec the schedule plans with (api/resolve.cpp's pipeline_spec_for), checked by the schedule.
inline PipelineSpec schedule_spec(const Schedule& schedule, const ScheduleRunSpec& run) {
  PipelineSpec spec;
  spec.devices = run.devices;
  spec.microbatches = run.microbatches;
  spec.batches = run.batches;
  spec.sync = schedule.default_sync() == OptimizerSync::kNone ? OptimizerSync::kNone
                                                              : run.sync.value_or(schedule.default_sync());
  const int devices = schedule.layout(run.devices).devices;
  spec.make_comm = [devices, latency_ns = run.latency_ns] {
    return std::make_unique<FixedLatencyComm>(
        std::vector<TimeNs>(static_cast<std::size_t>(devices), latency_ns));
  };
  schedule.check(spec);
  return spec;
}

// The schedule's plan for `run` on `costs`, run by the engine.
inline RunTrace run_schedule_plan(const ScheduleRunSpec& run, const CostModel& costs) {
  const std::unique_ptr<Schedule> schedule = make_test_schedule(run);
  const PipelineSpec spec = schedule_spec(*schedule, run);
  ExecutionPlan plan = schedule->plan(spec, costs);
  return run_plan(plan, costs, run.latency_ns);
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

}  // namespace pipesim::test
