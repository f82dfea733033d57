// Engine speed at scale: simulated ops per second of simulate() alone (the event loop with its trace
// recording and inline critical path; the plan is built outside the timing), of the one-pass stream that
// replaces it for static schedules under fixed latencies, and of a whole
// simulate_schedule (steady-state search, metrics, drift, memory), for N = 32, m = 1024 under fixed-latency
// comm, and of whole runs from about 10^4 to 10^7 ops. Issue targets: >= 10 M ops/s for 1F1B-flush and ZB-H1,
// >= 5 M for the async schedules, a cost per op flat from 10^4 to 10^7 ops.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <string>

#include "api/resolve.h"
#include "api/simulation.h"
#include "schedules/schedule.h"
#include "sim/engine/engine.h"
#include "sim/fast/repeated_list_stream.h"
#include "sim/fast/static_list_timing.h"
#include "sim/run_observer.h"

namespace pipesim {
namespace {

const char* const kSchedules[] = {"1f1b-flush", "zb-h1", "pipedream", "paci"};

Scenario scale_scenario(int microbatches = 1024) {
  return parse_scenario(
      fmt::format(
          "pipeline: {{stages: 32, microbatches: {}, batches: 2}}\n"
          "costs: {{forward_ms: 1.0, backward_input_ms: 1.0, backward_weight_ms: 1.0, comm_ms: 0.05,\n"
          "        activation_bytes: 1e6, weight_grad_activation_bytes: 4e5}}\n",
          microbatches),
      "bench", {});
}

ResolvedRun resolve_at_scale(const char* schedule) {
  ResolveOptions options;
  options.check = false;
  return resolve(scale_scenario(), {schedule, ScheduleParams("bench")}, options);
}

void BM_EngineN32M1024(benchmark::State& state) {
  const ResolvedRun run = resolve_at_scale(kSchedules[state.range(0)]);
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
  state.SetLabel(kSchedules[state.range(0)]);
  state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineN32M1024)->ArgName("schedule")->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

// The event loop streaming to an observer that ignores everything: the engine alone, nothing recorded.
struct IgnoringObserver final : RunObserver {
  void op_started(const OpRecord&) override {}
  void transfer_sent(const TransferRecord&) override {}
  void memory_changed(int, const MemorySample&) override {}
  void gradient_complete(const GradientRecord&) override {}
  void version_retired(int, int, TimeNs) override {}
  void run_finished(TimeNs) override {}
};

// Argument 1: 0 the event loop; 1 what a streamed run of a static schedule under fixed latencies uses
// instead (sim/fast/repeated_list_stream.h: one timing pass over the repeated lists, the engine's reports
// replayed from it in time order), for 1f1b-flush and zb-h1.
void BM_EngineStreamedN32M1024(benchmark::State& state) {
  const ResolvedRun run = resolve_at_scale(kSchedules[state.range(0)]);
  const bool one_pass = state.range(1) != 0;
  long ops = 0;
  IgnoringObserver observer;
  for (auto _ : state) {
    state.PauseTiming();
    ExecutionPlan plan = run.schedule->plan(run.spec, *run.costs);
    const std::unique_ptr<CommModel> comm = run.make_comm();
    state.ResumeTiming();
    const std::optional<RunTrace> trace = one_pass ? stream_repeated_lists(plan, *run.costs, *comm, observer)
                                                   : simulate(plan, *run.costs, *comm, observer);
    if (!trace) {
      state.SkipWithError("the one-pass stream does not apply");
      break;
    }
    ops += trace->ops_run();
    benchmark::DoNotOptimize(trace->makespan_ns);
  }
  state.SetLabel(kSchedules[state.range(0)]);
  state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EngineStreamedN32M1024)
    ->ArgNames({"schedule", "one_pass"})
    ->ArgsProduct({{0, 1, 2, 3}, {0}})
    ->ArgsProduct({{0, 1}, {1}})
    ->Unit(benchmark::kMillisecond);

// The dependency-ordered pass over static lists (what the Zero Bubble search scores candidates with): ops,
// versions, makespan and peaks, no transfers or memory timeline. 1f1b-flush and zb-h1 only.
void BM_StaticListTimingN32M1024(benchmark::State& state) {
  const ResolvedRun run = resolve_at_scale(kSchedules[state.range(0)]);
  const auto& schedule = dynamic_cast<const StaticSchedule&>(*run.schedule);
  const DeviceActionLists lists = schedule.all_actions(run.spec, *run.costs);
  long ops = 0;
  for (auto _ : state) {
    const std::optional<RunTrace> trace =
        time_static_lists({run.layout, lists, run.spec.total_microbatches(), BackwardReads::kCurrentWeights,
                           run.scenario.comm.latency_ns},
                          *run.costs);
    if (!trace) {
      state.SkipWithError("the static-list pass does not apply");
      break;
    }
    ops += static_cast<long>(trace->ops.size());
    benchmark::DoNotOptimize(trace->makespan_ns);
  }
  state.SetLabel(kSchedules[state.range(0)]);
  state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_StaticListTimingN32M1024)->ArgName("schedule")->DenseRange(0, 1)->Unit(benchmark::kMillisecond);

// Whole simulate_schedule runs of schedule state.range(0), timed; returns the ops they simulated.
long simulate_each_iteration(benchmark::State& state, const Scenario& scenario, bool keep_trace) {
  const ScheduleRequest request{kSchedules[state.range(0)], ScheduleParams("bench")};
  SimulationOptions options;
  options.keep_trace = keep_trace;
  long ops = 0;
  for (auto _ : state) {
    const SimulationResult result = simulate_schedule(scenario, request, options);
    ops += result.metrics.simulated_ops;
    benchmark::DoNotOptimize(result.metrics.makespan_ns);
  }
  state.SetLabel(kSchedules[state.range(0)]);
  return ops;
}

// Argument 1: 1 keeps the trace (what --trace needs), 0 streams (what run, sweep and the module do).
void BM_SimulateScheduleN32M1024(benchmark::State& state) {
  const long ops = simulate_each_iteration(state, scale_scenario(), state.range(1) != 0);
  state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimulateScheduleN32M1024)
    ->ArgNames({"schedule", "trace"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}})
    ->Unit(benchmark::kMillisecond);

// Cost per op against the run's size: whole streamed simulate_schedule runs of N = 32 from about 10^4 to 10^7
// simulated ops (m = 64 ... 65,536). Static schedules take the one-pass stream up to 2^17 ops a batch and
// the event loop above it, so their cost per op steps there; each path's should stay flat.
void BM_SimulateScheduleOpsScaling(benchmark::State& state) {
  const long ops = simulate_each_iteration(state, scale_scenario(static_cast<int>(state.range(1))), false);
  state.counters["ops"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kAvgIterations);
  state.counters["time_per_op"] =  // seconds, printed with SI prefixes (n for ns)
      benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SimulateScheduleOpsScaling)
    ->ArgNames({"schedule", "m"})
    ->ArgsProduct({{0, 1, 2}, {64, 512, 4096, 65536}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pipesim
