// pipesim run [SCENARIO] [--schedules a,b] [--format table|json|csv] [--wide] [--columns a,b] [--json F|-]
//             [--csv F|-] [--trace F] [--set key=value]
#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "api/run_batch.h"
#include "api/schedule_selection.h"
#include "api/simulation.h"
#include "api/unmodelled_check.h"
#include "base/errors.h"
#include "cli/commands.h"
#include "cli/validators.h"
#include "report/measured_comparison.h"
#include "report/progress_bar.h"
#include "report/recommendation.h"
#include "report/report.h"
#include "report/result_record.h"
#include "report/table_columns.h"
#include "report/trace_writer.h"

namespace pipesim {
namespace {

struct RunArgs {
  std::string scenario;
  std::string schedules;
  std::string entries;
  std::string json_path;
  std::string csv_path;
  std::string trace_path;
  std::vector<std::string> overrides;
  bool memory_timeline = false;
  bool task_graph = false;
  std::string format = "table";  // what goes to standard output
  bool wide = false;
  std::string columns;
  std::string sort;
  bool quiet = false;
  int trace_batches = 0;
  double trace_limit_mb = 256;
  bool force = false;
  bool allow_unmodelled = false;
};

// Standard output carries one document: --format's, or the one whose file is "-".
std::string stdout_format(const RunArgs& args) {
  const bool json = args.json_path == "-";
  const bool csv = args.csv_path == "-";
  if (json && csv) throw InputError("--json - and --csv -: only one output can go to standard output");
  if (json || csv) return json ? "json" : "csv";
  return args.format;
}

void run(const RunArgs& args, const Limits& limits) {
  for (const std::string* out : {&args.json_path, &args.csv_path, &args.trace_path}) check_output_path(*out);
  const std::string path = args.scenario.empty() ? default_scenario_path() : args.scenario;
  const std::string to_stdout = stdout_format(args);
  const TableOptions table{args.wide, args.columns.empty() ? std::vector<std::string>{}
                                                           : parse_column_list(args.columns, "--columns")};
  Scenario scenario = load_scenario(path, args.overrides);
  scenario.allow_unmodelled = args.allow_unmodelled;
  require_modelled(scenario);  // one error for the scenario, not one skipped run per schedule
  const std::vector<ScheduleRequest> requests = select_runs(scenario, args.schedules, args.entries);
  RunBatch batch;
  {
    ProgressBar progress(requests.size(), "schedules", ProgressBar::stderr_is_terminal() && !args.quiet);
    SimulationOptions simulation;
    simulation.analyze_graph = args.task_graph;
    simulation.limits = limits;
    // Only the Chrome trace and the memory timeline read the run op by op; without them it is streamed.
    simulation.keep_trace = !args.trace_path.empty() || args.memory_timeline;
    batch = run_schedules(scenario, requests, simulation, [&](size_t done) { progress.update(done); });
  }
  if (batch.results.empty()) throw_nothing_ran(batch.skipped);
  const std::vector<SimulationResult>& results = batch.results;
  // Every output is rendered before any is written: one that fails to render leaves all files as they were.
  const ReportOptions options{args.memory_timeline};
  const ResultsSource source{scenario.name, path};
  const bool json_wanted = !args.json_path.empty() || to_stdout == "json";
  const std::string json = json_wanted ? results_json_text(source, results, options, batch.skipped) : "";
  const std::string csv = !args.csv_path.empty() || to_stdout == "csv" ? results_to_csv(results) : "";
  const TraceWindow window{args.trace_batches};
  if (!args.trace_path.empty() && !args.force) {
    // A trace too large to open is refused before it is built (--trace-batches keeps the first batches).
    const double mib = estimated_trace_bytes(results, window) / (1024.0 * 1024.0);
    if (mib > args.trace_limit_mb) {
      throw InputError(fmt::format(
          "--trace {}: the trace would be about {:.3g} MiB, over the {:g} MiB limit (trace viewers struggle "
          "above "
          "a few hundred MiB); trace the first batches with --trace-batches K, raise --trace-limit-mb, or "
          "write it anyway with --force",
          args.trace_path, mib, args.trace_limit_mb));
    }
  }
  const std::string trace = args.trace_path.empty() ? "" : chrome_trace_json(results, scenario.name, window);
  if (to_stdout == "table") {
    const std::vector<SimulationResult> shown =
        args.sort.empty() ? results : sorted_by_column(results, args.sort);
    RecommendationContext context;
    context.transformer = scenario.transformer.has_value();
    context.can_recompute_more =
        context.transformer && scenario.transformer->model.recompute != Recompute::kFull;
    std::cout << render_result_table(scenario.name, shown, table) << recommendation_text(results, context)
              << skipped_runs_text(batch.skipped);
    if (scenario.measured) std::cout << measured_comparison_text(*scenario.measured, results);
  } else if (!batch.skipped.empty()) {
    std::cerr << skipped_runs_text(batch.skipped);  // standard output carries one document
  }
  if (to_stdout == "json") write_file("-", json);
  if (to_stdout == "csv") write_file("-", csv);
  if (!args.json_path.empty() && args.json_path != "-") write_file(args.json_path, json);
  if (!args.csv_path.empty() && args.csv_path != "-") write_file(args.csv_path, csv);
  if (!args.trace_path.empty()) write_file(args.trace_path, trace);
}

}  // namespace

void add_run_command(CLI::App& app, const Limits& limits) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* cmd = app.add_subcommand("run", "simulate a scenario's schedules and print a comparison table");
  cmd->add_option("scenario", args->scenario, "scenario YAML file (default: scenarios/default.yaml)");
  cmd->add_option("--schedules", args->schedules,
                  "comma-separated schedules to run instead of the scenario's (name or name:key=value): "
                  "registered schedules with their defaults and the scenario's pipeline");
  cmd->add_option(
      "--entry", args->entries,
      "the scenario's schedule entries to run, 1-based and comma-separated (e.g. 1,3), with their "
      "parameters and pipeline: (--set pipeline.K still applies on top)");
  cmd->add_option("--format", args->format, "what standard output carries: table (default), json or csv")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  cmd->add_flag("--quiet,-q", args->quiet, "no progress bar");
  cmd->add_flag("--wide", args->wide, "every column of the table, not only the compact ones");
  std::string column_ids;
  for (const TableColumnInfo& c : table_columns()) column_ids += (column_ids.empty() ? "" : ",") + c.id;
  cmd->add_option(
      "--columns", args->columns,
      "the table's columns, comma-separated (the JSON and CSV names of their figures), from: " + column_ids);
  cmd->add_option("--sort", args->sort,
                  "order the table's rows by a column id (see --columns): throughput columns highest first, "
                  "the others lowest first");
  cmd->add_option(
      "--json", args->json_path,
      "write the results as JSON (schema/pipesim-result.v1.schema.json) to this file; - for stdout");
  cmd->add_option("--csv", args->csv_path, "write one CSV row per schedule to this file; - for stdout");
  cmd->add_option(
      "--trace", args->trace_path,
      "write a Chrome/Perfetto trace (ui.perfetto.dev, chrome://tracing) of every run to this file");
  cmd->add_option("--trace-batches", args->trace_batches,
                  "with --trace: trace only the first K batches of each run (default: the whole run)")
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--trace-limit-mb", args->trace_limit_mb,
                  "with --trace: refuse a trace larger than this many MiB (default 256) unless --force")
      ->check(finite_range(0.001, 1e9));
  cmd->add_flag("--force", args->force, "write the trace whatever its size");
  add_allow_unmodelled_flag(cmd, args->allow_unmodelled);
  cmd->add_option("--set", args->overrides, "override a scenario key, e.g. --set pipeline.microbatches=16")
      ->allow_extra_args(false);
  cmd->add_flag("--memory-timeline", args->memory_timeline,
                "include each device's memory timeline in the JSON");
  cmd->add_flag("--task-graph", args->task_graph,
                "also build the realized task graph (Boost.Graph): checks every dependency of the run and "
                "the engine's inline critical path against the graph's longest path (slower, more memory)");
  cmd->callback([args, &limits] { run(*args, limits); });
}

}  // namespace pipesim
