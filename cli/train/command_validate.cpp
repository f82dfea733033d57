// pipesim validate [SCENARIO] [--schedules a,b] [--max-mape PCT] [--json F] [--csv F] [--profile P]
// [--set key=value] [model options]
#include <fmt/format.h>

#include <iostream>

#include "api/schedule_selection.h"
#include "api/simulation.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/train/model_options.h"
#include "cli/validators.h"
#include "io/hardware_profile_reader.h"
#include "train/validate.h"
#include "train/validate_report.h"

namespace pipesim {
namespace {

struct ValidateArgs {
  std::string scenario;
  std::string schedules;
  std::string json_path;
  std::string csv_path;
  std::string profile = "cpu-vm";
  double max_mape_percent = -1;
  std::vector<std::string> overrides;
  executor::TrainingSetup setup;
};

int validate(const ValidateArgs& args) {
  check_output_path(args.json_path);
  check_output_path(args.csv_path);
  const std::string path = args.scenario.empty() ? default_scenario_path() : args.scenario;
  const Scenario scenario = load_scenario(path, args.overrides);
  const HardwareProfile profile = load_hardware_profile(resolve_profile_path(args.profile));
  ValidationOptions options;
  options.setup = args.setup;
  options.profile = args.profile;
  ValidationReport report;
  report.scenario = scenario.name;
  for (const ScheduleRequest& request : select_schedules(scenario, args.schedules))
    report.schedules.push_back(validate_schedule(scenario, request, options, profile));
  std::cout << validation_table(report);
  if (!args.json_path.empty()) write_file(args.json_path, validation_json_text(report));
  if (!args.csv_path.empty()) write_file(args.csv_path, validation_csv(report));
  const double mape = throughput_mape(report, Prediction::kFitted);
  if (args.max_mape_percent >= 0 && mape > args.max_mape_percent) {
    std::cerr << fmt::format("pipesim: throughput MAPE with fitted costs {:.2f} % exceeds --max-mape {} %\n",
                             mape, args.max_mape_percent);
    return 1;
  }
  return 0;
}

}  // namespace

void add_validate_command(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* cmd = app.add_subcommand(
      "validate", "train under each schedule with the executor and compare the simulator's predictions");
  cmd->add_option("scenario", args->scenario, "scenario YAML file (default: scenarios/default.yaml)");
  cmd->add_option("--schedules", args->schedules, "comma-separated schedules instead of the scenario's");
  cmd->add_option("--max-mape", args->max_mape_percent,
                  "exit 1 when the throughput MAPE with fitted costs exceeds this percentage")
      ->check(finite_range(0.0, 1e9));
  cmd->add_option("--json", args->json_path, "write the comparison as JSON to this file ('-' for stdout)");
  cmd->add_option("--csv", args->csv_path, "write the comparison as CSV to this file ('-' for stdout)");
  cmd->add_option("--profile", args->profile,
                  "CPU hardware profile for the cost-model prediction (pipesim calibrate --cpu)")
      ->capture_default_str();
  cmd->add_option("--set", args->overrides, "override a scenario key, e.g. --set pipeline.stages=8");
  add_model_options(cmd, args->setup);
  cmd->callback([args] {
    if (validate(*args) != 0) throw CLI::RuntimeError(kExitCheckFailed);
  });
}

}  // namespace pipesim
