// pipesim import trace RANK0.json [RANK1.json ...] --schedule NAME [--ranks N] [-o FILE] [--name NAME]
//   [--simulated-trace FILE]
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "api/simulation.h"
#include "base/errors.h"
#include "base/text_file.h"
#include "cli/commands.h"
#include "import/pytorch_trace.h"
#include "import/trace_import.h"
#include "report/trace_writer.h"

namespace pipesim {
namespace {

struct ImportTraceArgs {
  std::vector<std::string> traces;
  std::string output = "-";
  std::string simulated_trace;  // default: beside the output, NAME-simulated.json
  TraceImportSettings settings;
};

void import_trace(ImportTraceArgs& args, const Limits& limits) {
  TracedActions traced;
  for (const std::string& path : args.traces) {
    read_pytorch_trace(read_text_file(path, "Chrome trace"), path, traced);
  }
  TraceImportSettings settings = args.settings;
  settings.sources = args.traces;
  if (settings.name.empty()) settings.name = std::filesystem::path(args.traces.front()).stem().string();
  settings.origin =
      fmt::format("pipesim import trace {} --schedule {}{}", fmt::join(args.traces, " "), settings.schedule,
                  settings.ranks > 0 ? fmt::format(" --ranks {}", settings.ranks) : "");
  const std::string text = scenario_from_trace(traced, settings);
  std::string simulated = args.simulated_trace;
  if (simulated.empty() && args.output != "-") {
    const std::filesystem::path out(args.output);
    simulated = (out.parent_path() / (out.stem().string() + "-simulated.json")).string();
  }
  if (!simulated.empty()) check_output_path(simulated);
  write_file(args.output, text);
  std::cerr << traced_durations_table(traced);
  if (simulated.empty()) return;
  // The same schedule simulated on the traced costs, to open beside the measured trace.
  const Scenario scenario = parse_scenario(text, args.output);
  SimulationOptions options;
  options.fixed_batches = true;
  options.limits = limits;
  std::vector<SimulationResult> results;
  for (const ScheduleRequest& request : requested_schedules(scenario)) {
    results.push_back(simulate_schedule(scenario, request, options));
  }
  write_file(simulated, chrome_trace_json(results, scenario.name));
  std::cerr << fmt::format("wrote {} and its simulated run {} (open it beside the measured trace)\n",
                           args.output, simulated);
}

}  // namespace

void add_import_trace_command(CLI::App* import, const Limits& limits) {
  auto args = std::make_shared<ImportTraceArgs>();
  CLI::App* cmd = import->add_subcommand("trace",
                                         "costs measured by a PyTorch pipelining run: a Chrome/Kineto trace "
                                         "(one file per rank, or merged) whose "
                                         "PP:<stage><F|B|I|W><microbatch> ranges give each stage's op times");
  cmd->add_option("TRACE", args->traces, "the trace files (torch.profiler's export_chrome_trace)")
      ->required();
  cmd->add_option("--schedule", args->settings.schedule,
                  "the schedule the run used: a registered name or PyTorch's class name (e.g. "
                  "ScheduleInterleaved1F1B)")
      ->required();
  cmd->add_option("--ranks", args->settings.ranks,
                  "pipeline ranks (default: the trace's stages over the schedule's stages per rank)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("-o,--output", args->output, "the scenario file to write (default: standard output)");
  cmd->add_option("--name", args->settings.name,
                  "the scenario's name (default: the first trace's file name)");
  cmd->add_option(
      "--simulated-trace", args->simulated_trace,
      "where to write the simulated run's Chrome trace (default: beside -o, NAME-simulated.json)");
  cmd->callback([args, &limits] { import_trace(*args, limits); });
}

}  // namespace pipesim
