// Engine speed at scale: simulated ops per second of simulate() alone (the event loop with its trace
// recording and inline critical path; the plan is built outside the timing) and of a whole
// simulate_schedule (steady-state search, metrics, drift, memory), for N = 32, m = 1024 under fixed-latency
// comm. Issue targets: >= 10 M ops/s for 1F1B-flush and ZB-H1, >= 5 M for the async schedules.
#include <benchmark/benchmark.h>

#include <string>

#include "api/resolve.h"
#include "api/simulation.h"
#include "sim/engine.h"

namespace pipesim {
namespace {

const char* const kSchedules[] = {"1f1b-flush", "zb-h1", "pipedream", "paci"};

Scenario scale_scenario() {
  return parse_scenario(
      "pipeline: {stages: 32, microbatches: 1024, batches: 2}\n"
      "costs: {forward_ms: 1.0, backward_input_ms: 1.0, backward_weight_ms: 1.0, comm_ms: 0.05,\n"
      "        activation_bytes: 1e6, weight_grad_activation_bytes: 4e5}\n",
      "bench", {});
}

void BM_EngineN32M1024(benchmark::State& state) {
  const Scenario scenario = scale_scenario();
  const ScheduleRequest request{kSchedules[state.range(0)], ScheduleParams("bench")};
  ResolveOptions options;
  options.check = false;
  const ResolvedRun run = resolve(scenario, request, options);
  long ops = 0;
  for (auto _ : state) {
    state.PauseTiming();
    ExecutionPlan plan = run.schedule->plan(run.spec, *run.costs);
    const std::unique_ptr<CommModel> comm = run.make_comm();
    state.ResumeTiming();
    const RunTrace trace = simulate(plan, *run.costs, *comm);
    ops += static_cast<long>(trace.ops.size());
    benchmark::DoNotOptimize(trace.makespan_ns);
  }
  state.SetLabel(request.name);
  state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineN32M1024)->ArgName("schedule")->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

void BM_SimulateScheduleN32M1024(benchmark::State& state) {
  const Scenario scenario = scale_scenario();
  const ScheduleRequest request{kSchedules[state.range(0)], ScheduleParams("bench")};
  long ops = 0;
  for (auto _ : state) {
    const SimulationResult result = simulate_schedule(scenario, request);
    ops += result.metrics.simulated_ops;
    benchmark::DoNotOptimize(result.metrics.makespan_ns);
  }
  state.SetLabel(request.name);
  state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimulateScheduleN32M1024)->ArgName("schedule")->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pipesim
