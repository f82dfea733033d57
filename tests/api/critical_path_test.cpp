// The engine's inline critical path (RunTrace::critical_path_ns, tracked as ops start) against the Boost
// task graph's longest path (analysis/task_graph.h), on random configurations of every registered schedule:
// uneven stages, jitter, m below N, each comm model. simulate_schedule with the graph cross-checks the two
// and throws when they differ; this test also walks the inline path.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "analysis/task_graph.h"
#include "schedules/registry.h"
#include "tests/random_scenarios.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

// Costs per stage, with a fixed comm latency (comm_ms) unless the comm is a link.
// Walks the path: ops in time order, their durations within its length, its length within the makespan.
void expect_consistent_path(const RunTrace& trace, const std::string& what) {
  ASSERT_FALSE(trace.critical_path.empty()) << what;
  TimeNs busy_ns = 0;
  for (size_t k = 0; k < trace.critical_path.size(); ++k) {
    const OpRecord& op = trace.ops[trace.critical_path[k]];
    busy_ns += op.duration_ns();
    if (k > 0) {
      const OpRecord& before = trace.ops[trace.critical_path[k - 1]];
      EXPECT_LE(before.end_ns, op.start_ns)
          << what << ": " << describe(before.action) << " -> " << describe(op.action);
    }
  }
  EXPECT_LE(busy_ns, trace.critical_path_ns) << what;
  EXPECT_LE(trace.critical_path_ns, trace.makespan_ns) << what;
}

TEST(CriticalPath, InlineEqualsTheTaskGraphOnRandomRuns) {
  std::mt19937 rng(20261202);
  int runs = 0;
  for (const ScheduleInfo& info : registered_schedules()) {
    for (int trial = 0; trial < 6; ++trial) {
      const int stages = std::uniform_int_distribution<int>(2, 6)(rng);
      const int microbatches = std::uniform_int_distribution<int>(1, 3 * stages)(rng);
      const int comm = std::uniform_int_distribution<int>(0, 2)(rng);
      const std::string yaml =
          fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: 3}}\n", stages, microbatches) +
          test::random_costs(rng, stages, comm == 1) + test::kRandomCommLines[comm];
      const Scenario scenario = test::scenario_from_yaml(yaml);
      SimulationOptions options = test::fixed_batches();
      options.analyze_graph = true;
      const std::uint64_t seed = rng();
      if (trial % 2 == 1) {
        options.decorate_costs = test::jitter_and_stragglers(seed);
      }
      const std::string what = fmt::format("{} trial {}:\n{}", info.name, trial, yaml);
      SimulationResult result;
      try {
        result = test::run_schedule(scenario, info.name, {}, options);
      } catch (const InputError&) {
        continue;  // a shape the schedule refuses (e.g. m < N for pipedream-2bw, m % N for interleaved)
      }
      ++runs;
      EXPECT_EQ(result.trace.critical_path_ns, analyze_task_graph(result.trace).critical_path_ns) << what;
      expect_consistent_path(result.trace, what);
    }
  }
  EXPECT_GT(runs, static_cast<int>(registered_schedules().size()) * 3);
}

}  // namespace
}  // namespace pipesim
