// pipesim run [SCENARIO] [--schedules a,b] [--json F] [--csv F] [--trace F] [--set key=value]
#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "api/schedule_selection.h"
#include "api/simulation.h"
#include "cli/commands.h"
#include "report/report.h"
#include "report/trace_writer.h"
#include "sim/errors.h"

namespace pipesim {
namespace {

struct RunArgs {
  std::string scenario;
  std::string schedules;
  std::string json_path;
  std::string csv_path;
  std::string trace_path;
  std::vector<std::string> overrides;
  bool memory_timeline = false;
};

void run(const RunArgs& args) {
  for (const std::string* out : {&args.json_path, &args.csv_path, &args.trace_path}) check_output_path(*out);
  const std::string path = args.scenario.empty() ? default_scenario_path() : args.scenario;
  const Scenario scenario = load_scenario(path, args.overrides);
  std::vector<SimulationResult> results;
  for (const ScheduleRequest& request : select_schedules(scenario, args.schedules)) {
    results.push_back(simulate_schedule(scenario, request));
  }
  // Every output is rendered before any is written: one that fails to render leaves all files as they were.
  const ReportOptions options{args.memory_timeline};
  const std::string json = args.json_path.empty() ? "" : results_to_json(scenario.name, results, options);
  const std::string csv = args.csv_path.empty() ? "" : results_to_csv(results);
  const std::string trace = args.trace_path.empty() ? "" : chrome_trace_json(results);
  std::cout << render_results_table(scenario.name, results);
  if (!args.json_path.empty()) write_file(args.json_path, json);
  if (!args.csv_path.empty()) write_file(args.csv_path, csv);
  if (!args.trace_path.empty()) write_file(args.trace_path, trace);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "simulate a scenario's schedules and print a comparison table");
  cmd->add_option("scenario", args->scenario, "scenario YAML file (default: scenarios/default.yaml)");
  cmd->add_option("--schedules", args->schedules,
                  "comma-separated schedules to run instead of the scenario's (name or name:key=value)");
  cmd->add_option("--json", args->json_path, "write the results as JSON to this file");
  cmd->add_option("--csv", args->csv_path, "write one CSV row per schedule to this file");
  cmd->add_option(
      "--trace", args->trace_path,
      "write a Chrome/Perfetto trace (ui.perfetto.dev, chrome://tracing) of every run to this file");
  cmd->add_option("--set", args->overrides, "override a scenario key, e.g. --set pipeline.microbatches=16")
      ->allow_extra_args(false);
  cmd->add_flag("--memory-timeline", args->memory_timeline,
                "include each device's memory timeline in the JSON");
  cmd->callback([args] { run(*args); });
}

}  // namespace pipesim
