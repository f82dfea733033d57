#pragma once
// A scenario's schedules run as one table: every run that can run, and the ones that cannot (a schedule that
// rejects the pipeline, a layer split with an empty stage, a run over the resource ceiling, a deadlock under
// a memory limit) listed as skipped with a one-line reason instead of ending the command. `pipesim run` and
// the Python module's run() both use it, so they skip the same runs.
#include <functional>
#include <string>
#include <vector>

#include "analysis/run_result.h"
#include "api/simulation.h"
#include "base/errors.h"
#include "io/scenario.h"
#include "report/result_record.h"

namespace pipesim {

struct RunBatch {
  std::vector<SimulationResult> results;  // in request order, skipped ones left out
  std::vector<SkippedRun> skipped;        // in request order
};

// Checks every request before any runs (the schedule's rules for this pipeline, the resource ceiling, the
// costs it needs), then runs the ones that passed. A bad schedule name or parameter is still an InputError
// (bad input, not a run that cannot happen here); internal errors are never skipped. `progress` is told the
// runs finished or skipped so far, out of requests.size().
RunBatch run_schedules(const Scenario& scenario, const std::vector<ScheduleRequest>& requests,
                       const SimulationOptions& options, const std::function<void(size_t)>& progress = {});

// "skipped (cannot run here):" and a line per skipped run; "" when none was.
std::string skipped_runs_text(const std::vector<SkippedRun>& skipped);

// The first line of an error, bounded, for the skipped list.
std::string one_line_reason(const std::string& message);

// Thrown when every request was skipped: nothing to show. Its exit code is distinct (README, "Exit codes").
class NothingRanError : public InputError {
 public:
  using InputError::InputError;
};
// "nothing could run: ..." with each skipped run's reason.
[[noreturn]] void throw_nothing_ran(const std::vector<SkippedRun>& skipped);

}  // namespace pipesim
