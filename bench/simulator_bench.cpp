// Simulator speed: simulated ops per second for 1F1B-flush at N=32, m=256 over 4 batches (the Zero Bubble
// paper's 28.3B setting), end to end as `pipesim run` does it: plan, engine with recording, metrics, and
// optionally the Boost.Graph task-graph analysis. Target: >= 1M ops/s on one core.
#include <benchmark/benchmark.h>

#include <string>

#include "api/simulation.h"
#include "pipesim_source_dir.h"

namespace pipesim {
namespace {

Scenario bench_scenario() {
  // Pin the shape so that edits to the scenario file cannot change what is measured.
  return load_scenario(std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/zb/28.3B-N32-m256.yaml",
                       {"pipeline.stages=32", "pipeline.microbatches=256", "pipeline.batches=4"});
}

void BM_OneFOneBFlushN32M256(benchmark::State& state) {
  const Scenario scenario = bench_scenario();
  const ScheduleRequest request{"1f1b-flush", ScheduleParams("bench")};
  SimulationOptions options;
  options.analyze_graph = state.range(0) != 0;
  long ops = 0;
  long ops_per_run = 0;
  for (auto _ : state) {
    SimulationResult result = simulate_schedule(scenario, request, options);
    ops_per_run = result.metrics.simulated_ops;
    ops += ops_per_run;
    benchmark::DoNotOptimize(result);
  }
  state.counters["ops_per_s"] = benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
  state.counters["ops_per_run"] = static_cast<double>(ops_per_run);
}
BENCHMARK(BM_OneFOneBFlushN32M256)->ArgName("task_graph")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pipesim
