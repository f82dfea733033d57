// pipesim export SCHEDULE --stages N --microbatches M [--chunks v] [--costs F,I,W] [--comm ms] [--csv FILE]
//   [--comms]
// pipesim export SCENARIO.yaml [--entry K] [--set key=value] [--csv FILE]
// pipesim export SCHEDULE --scenario SCENARIO.yaml [--chunks v] [--set key=value] [--csv FILE]
#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "api/schedule_export.h"
#include "base/errors.h"
#include "cli/commands.h"
#include "cli/quick_scenario_options.h"

namespace pipesim {

namespace {

struct ExportArgs {
  QuickScenarioArgs scenario;
  std::string csv_path;
  std::string scenario_path;  // --scenario: plan SCHEDULE with this scenario's pipeline, costs and comm
  std::vector<std::string> overrides;
  int entry = 1;
  bool comms = false;  // PyTorch's compute_comms format
  bool allow_unmodelled = false;
};

// SCHEDULE names a scenario file: its entry is planned with the scenario's own costs (zb-1p/2p included).
bool names_scenario_file(const std::string& argument) {
  return argument.size() > 5 && argument.ends_with(".yaml") && std::filesystem::is_regular_file(argument);
}

}  // namespace

void add_export_command(CLI::App& app, const Limits& limits) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "write a static schedule's per-device lists for one batch in PyTorch's pipelining CSV format");
  add_quick_scenario_options(cmd, args->scenario);
  cmd->add_option("--csv", args->csv_path, "write the CSV to this file (default: standard output)");
  cmd->add_option("--entry", args->entry,
                  "with a scenario file (SCENARIO.yaml instead of SCHEDULE): its schedule entry to export, "
                  "1-based")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--scenario", args->scenario_path,
                  "plan SCHEDULE with this scenario's pipeline, costs and comm (zb-1p/2p search with them); "
                  "its keys change with --set");
  cmd->add_option("--set", args->overrides, "with a scenario file: override a scenario key");
  add_allow_unmodelled_flag(cmd, args->allow_unmodelled);
  cmd->add_flag(
      "--comms", args->comms,
      "PyTorch's compute_comms format: SEND_F/RECV_F/SEND_B/RECV_B actions where PyTorch's lowering "
      "pass puts them");
  cmd->callback([args, cmd, &limits] {
    const auto load = [&](const std::string& path) {
      Scenario scenario = load_scenario(path, args->overrides);
      scenario.allow_unmodelled = args->allow_unmodelled;
      return scenario;
    };
    if (!args->scenario_path.empty()) {
      for (const char* option : {"--stages", "--microbatches", "--costs", "--comm"}) {
        if (cmd->count(option) > 0) {
          throw InputError(
              fmt::format("{} and --scenario: the scenario gives the pipeline, costs and comm; "
                          "change them with --set (e.g. --set pipeline.microbatches=16)",
                          option));
        }
      }
    }
    const std::string csv =
        !args->scenario_path.empty() ? export_schedule_csv(load(args->scenario_path),
                                                           quick_request(args->scenario), args->comms, limits)
        : names_scenario_file(args->scenario.schedule)
            ? export_scenario_entry_csv(load(args->scenario.schedule), args->entry, args->comms, limits)
            : export_schedule_csv(quick_scenario(args->scenario), quick_request(args->scenario), args->comms,
                                  limits);
    if (args->csv_path.empty()) {
      std::cout << csv;
    } else {
      write_file(args->csv_path, csv);
    }
  });
}

}  // namespace pipesim
