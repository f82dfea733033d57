#include "api/run_batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "api/resolve.h"
#include "base/errors.h"
#include "schedules/registry.h"
#include "sim/resource_estimate.h"

namespace pipesim {
namespace {

// The schedule's label with the entry's pipeline: "paci(accumulation=4) [B=128 m=4 b=32]".
std::string request_text(const Scenario& scenario, const ScheduleRequest& request) {
  const std::string label = make_schedule(request.name, request.params)->label();
  try {
    return label + pipeline_label(scenario_for(scenario, request), request);
  } catch (const InputError&) {
    return label;
  }
}

}  // namespace

std::string one_line_reason(const std::string& message) {
  constexpr size_t kMaxChars = 300;
  std::string line = message.substr(0, message.find('\n'));
  if (line.size() > kMaxChars) line = line.substr(0, kMaxChars - 3) + "...";
  return line;
}

RunBatch run_schedules(const Scenario& scenario, const std::vector<ScheduleRequest>& requests,
                       const SimulationOptions& options, const std::function<void(size_t)>& progress) {
  std::vector<std::optional<SkippedRun>> skip(requests.size());
  const auto skip_with = [&](size_t i, const std::exception& e) {
    // The reason without the request's location, which `where` holds.
    const std::string& where = requests[i].params.where();
    std::string reason = e.what();
    if (reason.rfind(where + ": ", 0) == 0) reason = reason.substr(where.size() + 2);
    // ... and without the schedule's name, which the listing puts first.
    const std::string& name = requests[i].name;
    if (reason.rfind(name + ": ", 0) == 0) reason = reason.substr(name.size() + 2);
    skip[i] = SkippedRun{request_text(scenario, requests[i]), where, one_line_reason(reason)};
  };
  // Every request is checked before the first run, so a run that cannot happen is known at once, and the
  // runs' work is summed: each under its own ceiling can still take minutes together.
  ResolveOptions checks;
  checks.task_graph = options.analyze_graph;
  checks.records = options.keep_trace || options.analyze_graph;
  checks.fixed_batches = options.fixed_batches;
  checks.limits = options.limits;
  double ops = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    make_schedule(requests[i].name, requests[i].params);  // a bad name or parameter is bad input: thrown
    try {
      ops += estimated_ops(resolve(scenario, requests[i], checks), checks);
    } catch (const InputError& e) {
      skip_with(i, e);
    }
  }
  size_t done = static_cast<size_t>(std::count_if(skip.begin(), skip.end(), [](const auto& s) { return s; }));
  check_total_ops(ops, static_cast<double>(requests.size() - done), "run",
                  "run fewer schedules (--schedules, --entry) or lower N or m", options.limits);
  if (progress) progress(done);
  RunBatch batch;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (skip[i]) continue;
    try {
      batch.results.push_back(simulate_schedule(scenario, requests[i], options));
    } catch (const InputError& e) {
      skip_with(i, e);
    } catch (const DeadlockError& e) {
      skip_with(i, e);
    }
    if (progress) progress(++done);
  }
  for (std::optional<SkippedRun>& s : skip) {
    if (s) batch.skipped.push_back(std::move(*s));
  }
  return batch;
}

std::string skipped_runs_text(const std::vector<SkippedRun>& skipped) {
  if (skipped.empty()) return "";
  std::string text = fmt::format("\nskipped ({} cannot run here):\n", skipped.size());
  for (const SkippedRun& s : skipped) text += fmt::format("  {}: {}\n", s.schedule, s.reason);
  return text;
}

void throw_nothing_ran(const std::vector<SkippedRun>& skipped) {
  std::string reasons;
  for (const SkippedRun& s : skipped) reasons += fmt::format("; {}: {}", s.schedule, s.reason);
  throw NothingRanError(fmt::format("nothing could run ({} schedules skipped){}", skipped.size(), reasons));
}

}  // namespace pipesim
