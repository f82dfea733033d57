// The engine's inline critical path (RunTrace::critical_path_ns, tracked as ops start) against the Boost
// task graph's longest path (analysis/task_graph.h), on random configurations of every registered schedule:
// uneven stages, jitter, m below N, each comm model. The test walks the inline path too.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "analysis/task_graph.h"
#include "base/errors.h"
#include "schedules/registry.h"
#include "tests/schedules/schedule_runs.h"
#include "tests/sim/stage_table_costs.h"

namespace pipesim {
namespace {

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
      test::ScheduleRunSpec setup(info.name, stages, microbatches, 3);
      setup.fixed_batches = true;
      const std::uint64_t seed = rng();
      setup.exact_costs = trial % 2 == 0;  // odd trials: jitter and stragglers
      std::optional<test::PreparedSchedule> prepared;
      try {
        prepared.emplace(test::prepare_schedule(setup));
      } catch (const InputError&) {
        continue;  // a shape the schedule refuses (e.g. m < N for pipedream-2bw, m % N for interleaved)
      }
      const int layout_stages = prepared->layout.stages;
      const test::StageTableCosts base = test::random_stage_costs(rng, layout_stages);
      const std::uint32_t comm_seed = rng();
      setup.comm = [comm, comm_seed](int devices) {
        std::mt19937 comm_rng(comm_seed);
        return test::random_comm(comm_rng, comm, devices);
      };
      const test::JitteredStageCosts jittered(base, seed);
      const CostModel& costs = setup.exact_costs ? static_cast<const CostModel&>(base) : jittered;
      const std::string what =
          fmt::format("{} trial {}: N={} m={} comm {}{}", info.name, trial, stages, microbatches,
                      test::kRandomCommNames[comm], setup.exact_costs ? "" : ", jitter");
      RunTrace trace;
      try {
        trace = test::run_schedule_steady(setup, costs).trace;
      } catch (const InputError&) {
        continue;  // a shape the schedule refuses only once it plans
      }
      ++runs;
      EXPECT_EQ(trace.critical_path_ns, analyze_task_graph(trace).critical_path_ns) << what;
      expect_consistent_path(trace, what);
    }
  }
  EXPECT_GT(runs, static_cast<int>(registered_schedules().size()) * 3);
}

}  // namespace
}  // namespace pipesim
