// `pipesim plan` speed: a Llama-3-70B-like model (share/scenarios/transformer/llama3-70b-h100.yaml) on 1,024
// H100s at a global batch of 512, the default search (every t, p, d, b, schedule, PACI accumulation,
// recomputation and ZeRO stage), on the machine's cores. Target: under 60 s on 2 cores. Counters: the
// configurations considered, not simulated (pruned by a bound or over memory by a bound), simulated and
// reused.
#include <benchmark/benchmark.h>

#include <string>

#include "io/scenario.h"
#include "pipesim_source_dir.h"
#include "plan/plan.h"

namespace pipesim {
namespace {

void BM_PlanLlama70bOn1024Gpus(benchmark::State& state) {
  const Scenario scenario =
      load_scenario(std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/transformer/llama3-70b-h100.yaml");
  PlanOptions options;
  options.space.gpus = 1024;
  options.top = 5;
  PlanResult result;
  for (auto _ : state) {
    result = run_plan(scenario, options);
    benchmark::DoNotOptimize(result);
  }
  state.counters["considered"] = static_cast<double>(result.rows.size());
  state.counters["not_runnable"] = static_cast<double>(result.count(CandidateFate::kNotRunnable));
  state.counters["pruned_memory_bound"] = static_cast<double>(result.count(CandidateFate::kOverMemoryBound));
  state.counters["pruned_throughput_bound"] =
      static_cast<double>(result.count(CandidateFate::kPrunedByBound));
  state.counters["simulated"] =
      static_cast<double>(result.count(CandidateFate::kSimulated) + result.count(CandidateFate::kOverMemory) +
                          result.count(CandidateFate::kFailed));
  state.counters["reused"] = static_cast<double>(result.count(CandidateFate::kReused));
}
BENCHMARK(BM_PlanLlama70bOn1024Gpus)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace
}  // namespace pipesim
