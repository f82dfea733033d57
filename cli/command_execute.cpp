// pipesim execute [SCENARIO] [--mode replay|real] [--schedules a,b] [--json F] [--set key=value] [model
// options]
#ifdef PIPESIM_HAS_EXECUTOR
#include <fmt/format.h>

#include <iostream>

#include "api/execute.h"
#include "api/schedule_selection.h"
#include "api/simulation.h"
#include "cli/commands.h"
#include "cli/execution_summary.h"

namespace pipesim {
namespace {

struct ExecuteArgs {
  std::string scenario;
  std::string schedules;
  std::string mode = "replay";
  std::string json_path;
  std::vector<std::string> overrides;
  executor::TrainingSetup setup;
};

void execute(const ExecuteArgs& args) {
  check_output_path(args.json_path);
  const std::string path = args.scenario.empty() ? default_scenario_path() : args.scenario;
  const Scenario scenario = load_scenario(path, args.overrides);
  ExecuteOptions options;
  options.mode = args.mode == "real" ? ExecuteMode::kReal : ExecuteMode::kReplay;
  options.setup = args.setup;
  nlohmann::json runs = nlohmann::json::array();
  std::cout << fmt::format("{:<36} {:>6} {:>14} {:>12} {:>12}\n", "schedule", "mode", "makespan_ms",
                           "loss_first", "loss_last");
  for (const ScheduleRequest& request : select_schedules(scenario, args.schedules)) {
    const nlohmann::json summary = execution_summary(execute_schedule(scenario, request, options));
    std::cout << fmt::format(
        "{:<36} {:>6} {:>14.3f} {:>12.5f} {:>12.5f}\n", summary["schedule"].get<std::string>(),
        summary["mode"].get<std::string>(), summary["makespan_ns"].get<double>() / 1e6,
        summary["first_batch_mean_loss"].get<double>(), summary["last_batch_mean_loss"].get<double>());
    runs.push_back(summary);
  }
  if (!args.json_path.empty())
    write_file(args.json_path, nlohmann::json{{"scenario", scenario.name}, {"runs", runs}}.dump(2) + "\n");
}

}  // namespace

void add_execute_command(CLI::App& app) {
  auto args = std::make_shared<ExecuteArgs>();
  CLI::App* cmd = app.add_subcommand(
      "execute", "train a small residual-MLP model under the scenario's schedules with the CPU executor");
  cmd->add_option("scenario", args->scenario, "scenario YAML file (default: scenarios/default.yaml)");
  cmd->add_option("--schedules", args->schedules,
                  "comma-separated schedules to run instead of the scenario's (name or name:key=value)");
  cmd->add_option(
         "--mode", args->mode,
         "replay: the simulator's op order and clock with real numerics; real: one thread per device")
      ->check(CLI::IsMember({"replay", "real"}))
      ->capture_default_str();
  cmd->add_option("--json", args->json_path,
                  "write a JSON summary of every run to this file ('-' for stdout)");
  cmd->add_option("--set", args->overrides, "override a scenario key, e.g. --set pipeline.microbatches=8");
  cmd->add_option("--width", args->setup.shape.width, "model width d (the MLP's hidden width is 4d)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--blocks", args->setup.shape.blocks, "residual MLP blocks (raised to stages - 2 if fewer)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->add_option("--samples", args->setup.samples_per_microbatch, "samples per microbatch")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--lr", args->setup.learning_rate, "SGD learning rate")->capture_default_str();
  cmd->add_option("--seed", args->setup.seed, "seed of the weights and the teacher data")
      ->capture_default_str();
  cmd->callback([args] { execute(*args); });
}

}  // namespace pipesim
#endif
