// The realized task graph (analysis/task_graph.h): when every wait is a dependency its critical path is the
// makespan, and a trace whose times break a dependency is rejected.
#include "analysis/task_graph.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/schedules/schedule_runs.h"
#include "tests/sim/plans.h"

namespace pipesim {
namespace {

// A schedule's trace as a scenario with uniform F and B (ms per device; with chunks, split over them), a
// fixed comm latency and `batches` batches would give it: the steady-state search's last run.
RunTrace task_graph_trace(const std::string& name, int stages, int microbatches, double forward_ms,
                          double backward_ms, double comm_ms = 0, int batches = 4,
                          const std::map<std::string, std::string>& params = {}, int chunks = 1) {
  test::ScheduleRunSpec setup(name, stages, microbatches, batches);
  setup.params = params;
  setup.latency_ns = ms_to_ns(comm_ms);
  return test::run_schedule_steady(setup,
                                   test::UniformStageCosts::ms(forward_ms / chunks, backward_ms / chunks))
      .trace;
}

// Every op on the critical path starts exactly when its predecessor's output is usable, and the path runs
// from time 0 to the makespan.
void expect_tight_critical_path(const RunTrace& trace, TimeNs comm_ns) {
  const TaskGraphReport g = analyze_task_graph(trace);
  EXPECT_EQ(g.vertices, trace.ops.size());
  EXPECT_EQ(g.critical_path_ns, trace.makespan_ns);
  ASSERT_FALSE(g.critical_path.empty());
  const OpRecord& first = trace.ops[g.critical_path.front()];
  EXPECT_EQ(first.start_ns, 0);
  EXPECT_EQ(trace.ops[g.critical_path.back()].end_ns, trace.makespan_ns);
  for (size_t k = 1; k < g.critical_path.size(); ++k) {
    const OpRecord& before = trace.ops[g.critical_path[k - 1]];
    const OpRecord& after = trace.ops[g.critical_path[k]];
    const TimeNs gap = after.start_ns - before.end_ns;
    const bool same_device = before.device == after.device;
    // Same device: back to back (or a barrier at the same instant); other device: one transfer.
    EXPECT_EQ(gap, same_device || after.action.kind == OpKind::U ? 0 : comm_ns)
        << describe(before.action) << " -> " << describe(after.action);
  }
}

TEST(TaskGraph, CriticalPathIsTheMakespanFor1F1B) {
  expect_tight_critical_path(task_graph_trace("1f1b-flush", 4, 8, 1.0, 2.0), 0);
  expect_tight_critical_path(task_graph_trace("1f1b-flush", 8, 5, 1.5, 2.5), 0);
}

TEST(TaskGraph, CriticalPathIncludesCommLatency) {
  expect_tight_critical_path(task_graph_trace("1f1b-flush", 3, 6, 1.0, 2.0, 0.5), ms_to_ns(0.5));
}

TEST(TaskGraph, CriticalPathOfOtherFlushSchedules) {
  expect_tight_critical_path(task_graph_trace("gpipe", 4, 8, 1.0, 2.0), 0);
  expect_tight_critical_path(
      task_graph_trace("interleaved-1f1b", 4, 8, 1.0, 2.0, 0, 4, {{"chunks", "2"}}, /*chunks=*/2), 0);
}

TEST(TaskGraph, ForwardMovedBeforeItsInputIsRejected) {
  RunTrace trace = task_graph_trace("1f1b-flush", 4, 8, 1.0, 2.0, 0.0, 1);
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
  RunTrace trace = task_graph_trace("1f1b-flush", 2, 2, 1.0, 2.0, 0.0, 1);
  // Device 1 ran B(stage 2, mb 0) at 2-4 and F(stage 2, mb 1) at 4-5; start the forward at 3.9 instead.
  for (OpRecord& op : trace.ops) {
    if (op.action == forward(1, 1)) op.start_ns = ms_to_ns(3.9);
  }
  EXPECT_THROW(analyze_task_graph(trace), ScheduleError);
}

}  // namespace
}  // namespace pipesim
