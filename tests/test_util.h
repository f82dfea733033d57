#pragma once
// Helpers shared by the tests: scenarios from short YAML snippets, runs by schedule name, lookups and
// printable timelines of a trace. Header-only so any test file can include it.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "api/simulation.h"
#include "base/errors.h"
#include "cost_models/explicit_costs.h"
#include "schedules/schedule.h"
#include "tests/cost_models/uniform_costs.h"
#include "tests/error_text.h"
#include "tests/scenario_text.h"
#include "tests/sim/plans.h"
#include "tests/temp_dir.h"

namespace pipesim::test {

// N stages, m microbatches, uniform F and B (ms), a fixed comm latency, no schedule list.
inline Scenario uniform_scenario(int stages, int microbatches, double forward_ms, double backward_ms,
                                 double comm_ms = 0, int batches = 4) {
  return scenario_from_yaml(
      fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: {}}}\n"
                  "costs: {{forward_ms: {}, backward_ms: {}, comm_ms: {}}}\n",
                  stages, microbatches, batches, forward_ms, backward_ms, comm_ms));
}

inline SimulationResult run_schedule(const Scenario& scenario, const std::string& name,
                                     const std::map<std::string, std::string>& params = {},
                                     const SimulationOptions& options = {}) {
  ScheduleRequest request{name, ScheduleParams(kTestSource)};
  for (const auto& [key, value] : params) request.params.set(key, value);
  return simulate_schedule(scenario, request, options);
}

// Exactly the scenario's batches, figures over the whole run: for tests of the engine's trace.
inline SimulationOptions fixed_batches() {
  SimulationOptions options;
  options.fixed_batches = true;
  return options;
}

inline int batch_of(const Action& a, int microbatches_per_batch) {
  return a.kind == OpKind::U ? a.microbatch : a.microbatch / microbatches_per_batch;
}

// One device's ops of one batch in execution order as "F3@4.5" (tests/sim/plans.h's timeline).
inline std::vector<std::string> device_timeline(const RunTrace& trace, int device, int batch,
                                                int microbatches_per_batch) {
  return timeline(trace, device, batch, microbatches_per_batch);
}

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `launcher` (the binary, quoted, or a command that starts it) with `args` in a shell command line.
inline CommandResult run_pipesim_with(const std::string& launcher, const std::string& args,
                                      const TempDir& dir) {
  const std::string out = dir.file("stdout.txt");
  const std::string err = dir.file("stderr.txt");
  const int status = std::system(fmt::format("{} {} >'{}' 2>'{}'", launcher, args, out, err).c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_file(out);
  result.err = read_file(err);
  return result;
}

// Runs the real pipesim binary (PIPESIM_BINARY, set by CMake); `args` goes into a shell command line as is.
inline CommandResult run_pipesim(const std::string& args, const TempDir& dir) {
  return run_pipesim_with(fmt::format("'{}'", PIPESIM_BINARY), args, dir);
}

#ifdef PIPESIM_MPIEXEC
// Runs the binary under mpiexec (PIPESIM_MPIEXEC, set by CMake when it finds MPI) with `ranks` processes.
inline CommandResult run_pipesim_mpi(int ranks, const std::string& args, const TempDir& dir) {
  return run_pipesim_with(fmt::format("'{}' -n {} '{}'", PIPESIM_MPIEXEC, ranks, PIPESIM_BINARY), args, dir);
}
#endif

}  // namespace pipesim::test
