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

std::string chrome_trace_json(const std::vector<SimulationResult>& results,
                              const std::string& scenario_name = "");

}  // namespace pipesim
