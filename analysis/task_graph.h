#pragma once
// The realized task graph (Boost.Graph): one vertex per executed op, edges for data dependencies (with the
// transfer delay they carried), same-device order and optimizer barriers. Used to validate a run and to
// find its critical path.
#include <vector>

#include "sim/trace.h"

namespace pipesim {

struct TaskGraphReport {
  size_t vertices = 0;
  size_t edges = 0;
  TimeNs critical_path_ns = 0;
  std::vector<size_t> critical_path;  // indices into RunTrace::ops, first to last
};

// Throws ScheduleError when the graph has a cycle or an op started before one of its dependencies was
// satisfied (a bug in the engine or a corrupted trace).
TaskGraphReport analyze_task_graph(const RunTrace& trace);

}  // namespace pipesim
