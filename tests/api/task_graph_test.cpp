// The realized task graph: when every wait is a dependency its critical path is the makespan, and a trace
// whose times break a dependency is rejected.
#include "analysis/task_graph.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::uniform_scenario;

// Runs with the Boost task graph built (SimulationOptions::analyze_graph).
SimulationResult run_on_task_graph(const Scenario& scenario, const std::string& name,
                                   const std::map<std::string, std::string>& params = {}) {
  SimulationOptions options;
  options.analyze_graph = true;
  return test::run_schedule(scenario, name, params, options);
}

// Every op on the critical path starts exactly when its predecessor's output is usable, and the path runs
// from time 0 to the makespan.
void expect_tight_critical_path(const SimulationResult& r, TimeNs comm_ns) {
  const TaskGraphReport& g = r.graph;
  EXPECT_EQ(g.vertices, r.trace.ops.size());
  EXPECT_EQ(g.critical_path_ns, r.trace.makespan_ns);
  ASSERT_FALSE(g.critical_path.empty());
  const OpRecord& first = r.trace.ops[g.critical_path.front()];
  EXPECT_EQ(first.start_ns, 0);
  EXPECT_EQ(r.trace.ops[g.critical_path.back()].end_ns, r.trace.makespan_ns);
  for (size_t k = 1; k < g.critical_path.size(); ++k) {
    const OpRecord& before = r.trace.ops[g.critical_path[k - 1]];
    const OpRecord& after = r.trace.ops[g.critical_path[k]];
    const TimeNs gap = after.start_ns - before.end_ns;
    const bool same_device = before.device == after.device;
    // Same device: back to back (or a barrier at the same instant); other device: one transfer.
    EXPECT_EQ(gap, same_device || after.action.kind == OpKind::U ? 0 : comm_ns)
        << describe(before.action) << " -> " << describe(after.action);
  }
}

TEST(TaskGraph, CriticalPathIsTheMakespanFor1F1B) {
  expect_tight_critical_path(run_on_task_graph(uniform_scenario(4, 8, 1.0, 2.0), "1f1b-flush"), 0);
  expect_tight_critical_path(run_on_task_graph(uniform_scenario(8, 5, 1.5, 2.5), "1f1b-flush"), 0);
}

TEST(TaskGraph, CriticalPathIncludesCommLatency) {
  const SimulationResult r = run_on_task_graph(uniform_scenario(3, 6, 1.0, 2.0, 0.5), "1f1b-flush");
  expect_tight_critical_path(r, ms_to_ns(0.5));
}

TEST(TaskGraph, CriticalPathOfOtherFlushSchedules) {
  expect_tight_critical_path(run_on_task_graph(uniform_scenario(4, 8, 1.0, 2.0), "gpipe"), 0);
  expect_tight_critical_path(
      run_on_task_graph(uniform_scenario(4, 8, 1.0, 2.0), "interleaved-1f1b", {{"chunks", "2"}}), 0);
}

TEST(TaskGraph, ForwardMovedBeforeItsInputIsRejected) {
  RunTrace trace = run_on_task_graph(uniform_scenario(4, 8, 1.0, 2.0, 0.0, 1), "1f1b-flush").trace;
  ASSERT_NO_THROW(analyze_task_graph(trace));
  // F(stage 2, mb 0) ran 1-2 ms; move it half a millisecond earlier, before F(stage 1, mb 0) ended at 1.
  for (OpRecord& op : trace.ops) {
    if (op.action == forward(1, 0)) {
      op.start_ns -= ms_to_ns(0.5);
      op.end_ns -= ms_to_ns(0.5);
    }
  }
  try {
    analyze_task_graph(trace);
    ADD_FAILURE() << "no ScheduleError";
  } catch (const ScheduleError& e) {
    EXPECT_NE(
        std::string(e.what()).find("F(stage 2, mb 0) on device 2 started at 500000 ns before its dependency "
                                   "F(stage 1, mb 0) was ready at 1000000 ns"),
        std::string::npos)
        << e.what();
  }
}

TEST(TaskGraph, OverlapOnOneDeviceIsRejected) {
  RunTrace trace = run_on_task_graph(uniform_scenario(2, 2, 1.0, 2.0, 0.0, 1), "1f1b-flush").trace;
  // Device 1 ran B(stage 2, mb 0) at 2-4 and F(stage 2, mb 1) at 4-5; start the forward at 3.9 instead.
  for (OpRecord& op : trace.ops) {
    if (op.action == forward(1, 1)) op.start_ns = ms_to_ns(3.9);
  }
  EXPECT_THROW(analyze_task_graph(trace), ScheduleError);
}

}  // namespace
}  // namespace pipesim
