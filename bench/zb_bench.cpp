// Zero Bubble search speed: zb-2p at N=32, m=96 (the paper's 28.3B setting, profiled costs, comm and memory),
// the whole search: the greedy lists for all 8 flag settings under 2N and N microbatches of memory, ZB-H1,
// ZB-H2 and 1F1B, and every distinct one scored to steady state (sim/fast/repeated_list_timing.h) or until
// batch 0 proves it slower than the best so far, as tasks over the free cores (base/task_pool.h). Target: 3
// ms (100x the Zero Bubble authors' CPython greedy on this machine).
#include <benchmark/benchmark.h>

#include <string>

#include "api/resolve.h"
#include "pipesim_source_dir.h"
#include "schedules/zb_greedy.h"
#include "sim/fast/repeated_list_timing.h"

namespace pipesim {
namespace {

// The run's own resolution of zb-2p on the paper's 28.3B setting at N=32, m=96 (costs, comm, memory).
ResolvedRun zb_paper_run() {
  const Scenario scenario =
      load_scenario(std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/zb/28.3B-N32-m96.yaml",
                    {"pipeline.stages=32", "pipeline.microbatches=96", "pipeline.batches=4"});
  return resolve(scenario, ScheduleRequest{"zb-2p", ScheduleParams(scenario.source)});
}

void BM_Zb2pSearchN32M96(benchmark::State& state) {
  const auto sync = static_cast<OptimizerSync>(state.range(0));
  const ResolvedRun run = zb_paper_run();
  PipelineSpec spec = run.spec;
  spec.sync = sync;
  const CostModel* costs = run.costs.get();
  TimeNs period_ns = 0;
  for (auto _ : state) {
    const ZbCandidate best = zb_search(spec, *costs, 2.0);
    period_ns = best.score.period_ns;
    benchmark::DoNotOptimize(best);
  }
  state.counters["period_ms"] = ns_to_ms(period_ns);
}
BENCHMARK(BM_Zb2pSearchN32M96)
    ->ArgName("post_validation")
    ->Arg(static_cast<int>(OptimizerSync::kBarrier))
    ->Arg(static_cast<int>(OptimizerSync::kPostValidation))
    ->Unit(benchmark::kMillisecond);

// One run of the Zero Bubble greedy (all flags off) at N=32, m=96 under 2N microbatches of memory: the
// search runs it for up to 16 flag settings.
void BM_ZbGreedyRunN32M96(benchmark::State& state) {
  const ResolvedRun run = zb_paper_run();
  const ZbProblem problem = make_zb_problem(run.spec, *run.costs, 2.0);
  long ops = 0;
  for (auto _ : state) {
    const std::optional<ZbGreedyPlan> plan = zb_greedy_schedule(problem, ZbFlags{});
    if (!plan) {
      state.SkipWithError("no list under this limit");
      break;
    }
    for (const ActionList& list : plan->lists) ops += static_cast<long>(list.size());
    benchmark::DoNotOptimize(plan->predicted_cost_ns);
  }
  state.counters["placed_ops_per_s"] =
      benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ZbGreedyRunN32M96)->Unit(benchmark::kMicrosecond);

// One candidate's timing as the search scores it: the search's pick at N=32, m=96 (post-validation), its
// one-batch lists repeated over 4 batches and timed in one pass (sim/fast/repeated_list_timing.h). Counts the
// ops timed one by one (the batches before the run repeats), not the shifted copies.
void BM_RepeatedListTimingN32M96(benchmark::State& state) {
  const ResolvedRun run = zb_paper_run();
  const ZbCandidate best = zb_search(run.spec, *run.costs, 2.0);
  const PipelineLayout layout = PipelineLayout::linear(run.spec.devices);
  long ops = 0;
  for (auto _ : state) {
    const std::optional<RepeatedListTimes> times = time_repeated_lists(
        {layout, best.lists, run.spec.microbatches, 4, false, run.scenario.comm.latency_ns}, *run.costs);
    if (!times) {
      state.SkipWithError("the one pass does not apply");
      break;
    }
    ops += times->ops() / 4 * times->explicit_batches();
    benchmark::DoNotOptimize(times->makespan_ns());
  }
  state.counters["timed_ops_per_s"] =
      benchmark::Counter(static_cast<double>(ops), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RepeatedListTimingN32M96)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace pipesim
