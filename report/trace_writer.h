#pragma once
// Chrome trace event JSON of simulated runs (opens in ui.perfetto.dev and chrome://tracing):
//   - one process per device (pid = device; with several runs in one file, later runs' devices follow on);
//   - thread "compute" (tid 0) holds one complete event ("ph":"X") per op, named letter + microbatch ("F3",
//   "U0");
//   - threads "send" (tid 1000+k) and "receive" (tid 2000+k) hold one event per cross-device transfer: the
//   send
//     spans [sent, arrived] on the source, the receive [started moving, arrived] on the destination; k > 0
//     only when transfers overlap (a slow link), since events on one thread must not overlap;
//     a transfer that takes no time (free comm) has no slices;
//   - a flow arrow per transfer from the producing op's compute slice ("ph":"s") to the consuming op's
//     ("ph":"f", "bp":"e"), matching ids;
//   - thread "critical path" (tid 3000) repeats the ops on the run's critical path (task graph);
//   - a top-level "metadata" object: scenario, schedules (name, label, first_pid, devices: the run's
//     processes), pipesim version, units;
//   - counter tracks ("ph":"C") for activation memory, microbatches in flight and each stage's weight
//   version.
// Times are microseconds written exactly from the engine's nanoseconds ("12.345"). The output is a pure
// function of the runs, so equal runs give byte-identical files.
#include <string>
#include <vector>

#include "analysis/run_result.h"

namespace pipesim {

// Which part of each run a trace shows: the first `batches` batches (up to the first device's first op of
// batch `batches` + 1: ops that start, transfers sent and memory samples taken before it); 0: the whole run.
struct TraceWindow {
  int batches = 0;
};

std::string chrome_trace_json(const std::vector<SimulationResult>& results,
                              const std::string& scenario_name = "", const TraceWindow& window = {});

// About how many bytes chrome_trace_json would write (within a few tens of percent: events have variable
// width), so that a run can refuse a trace too large to open before writing it.
double estimated_trace_bytes(const std::vector<SimulationResult>& results, const TraceWindow& window = {});

// The run as the window shows it (ops are in start order, so the ops kept are a prefix and critical-path
// indices stay valid).
SimulationResult windowed(const SimulationResult& result, const TraceWindow& window);

}  // namespace pipesim
