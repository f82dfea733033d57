#include "python/pipesim_facade.h"

#include <fmt/format.h>

#include <mutex>
#include <nlohmann/json.hpp>

#include "api/quick_scenario.h"
#include "api/run_batch.h"
#include "api/schedule_export.h"
#include "api/schedule_selection.h"
#include "api/simulation.h"
#include "base/errors.h"
#include "report/report.h"
#include "report/result_figures.h"
#include "report/result_record.h"
#include "schedules/registry.h"
#include "sim/limits.h"
#include "sweeps/sweep.h"

namespace pipesim::facade {
namespace {

Scenario load(const ScenarioInput& input, const std::vector<std::string>& overrides) {
  if (!input.text.empty()) return parse_scenario(input.text, input.source, overrides);
  return load_scenario(input.path.empty() ? default_scenario_path() : input.path, overrides);
}

// The ranges the CLI's options enforce (CLI11 checks there), for the same values coming from Python.
void check_range(const char* option, double value, double min_value, double max_value) {
  if (!(value >= min_value && value <= max_value)) {
    throw InputError(fmt::format("{}: {} is not in [{}, {}]", option, value, min_value, max_value));
  }
}

// The ceilings of every later run, as the CLI's --max-* options (set_max_memory_gb): the module's own, as
// the command line's are main()'s, and passed down with each call.
// Copied at each call's start under a lock: another Python thread may set them while a call runs.
std::mutex limits_mutex;
Limits limits_set;

Limits module_limits() {
  const std::lock_guard<std::mutex> lock(limits_mutex);
  return limits_set;
}

}  // namespace

// The body of `pipesim run` (cli/command_run.cpp) without the table and the files.
std::string run_json(const ScenarioInput& input, const RunOptions& options) {
  Scenario scenario = load(input, options.overrides);
  scenario.allow_unmodelled = options.allow_unmodelled;
  SimulationOptions simulation;
  simulation.limits = module_limits();
  simulation.keep_trace =
      options.memory_timeline;  // as `pipesim run`: the timeline is the only op-level output
  // The same runs and skips as `pipesim run` (api/run_batch.h): the document lists what could not run.
  const RunBatch batch = run_schedules(scenario, select_schedules(scenario, options.schedules), simulation);
  if (batch.results.empty()) throw_nothing_ran(batch.skipped);
  const std::string path = !input.text.empty()  ? input.source
                           : input.path.empty() ? default_scenario_path()
                                                : input.path;
  return results_json_text(ResultsSource{scenario.name, path}, batch.results,
                           ReportOptions{options.memory_timeline}, batch.skipped);
}

// The body of `pipesim sweep` (cli/command_sweep.cpp), the CSV returned instead of written.
std::string sweep_csv(const std::string& scenario_path, const SweepOptions& options) {
  SweepConfig config;
  config.scenario_path = scenario_path;
  config.overrides = options.overrides;
  if (!options.stages.empty()) config.stages = expand_int_list(options.stages, "--stages", 1);
  if (!options.microbatches.empty()) {
    config.microbatches = expand_int_list(options.microbatches, "--microbatches", 1);
  }
  config.schedules = options.schedules;
  for (const auto& [key, list] : options.params) {
    config.params.emplace_back(key, expand_value_list(list, "--param " + key));
  }
  if (options.jobs != 0) check_range("--jobs", options.jobs, 1, 4096);
  config.jobs = options.jobs;
  config.allow_unmodelled = options.allow_unmodelled;
  config.limits = module_limits();
  return sweep_to_csv(run_sweep(config));
}

std::string schedules_json() {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const ScheduleInfo& info : registered_schedules()) {
    // Facts the schedule states about itself with its default parameters.
    const std::unique_ptr<Schedule> schedule = make_schedule(info.name, ScheduleParams(info.name));
    list.push_back({{"name", info.name},
                    {"description", info.description},
                    {"default_sync", name_in(sync_names(), schedule->default_sync())},
                    {"splits_backward", schedule->splits_backward()},
                    {"exportable", dynamic_cast<const StaticSchedule*>(schedule.get()) != nullptr}});
  }
  return list.dump();
}

std::string export_csv(const ExportOptions& options) {
  check_range("--stages", options.stages, 1, 4096);
  check_range("--microbatches", options.microbatches, 1, 1 << 20);
  if (options.chunks != 0) check_range("--chunks", options.chunks, 1, 1024);
  QuickScenarioArgs args;
  args.schedule = options.schedule;
  args.stages = options.stages;
  args.microbatches = options.microbatches;
  args.chunks = options.chunks;
  args.costs = options.costs;
  args.comm_ms = options.comm_ms;
  return export_schedule_csv(quick_scenario(args), quick_request(args), false, module_limits());
}

void set_max_memory_gb(double gb) {
  check_range("--max-memory-gb", gb, 0.001, 1e6);
  const std::lock_guard<std::mutex> lock(limits_mutex);
  limits_set.memory_bytes = gb * 1e9;
}
double max_memory_gb() {
  return module_limits().memory_bytes / 1e9;
}

}  // namespace pipesim::facade
