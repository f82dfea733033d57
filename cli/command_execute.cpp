// pipesim execute [SCENARIO] [--mode replay|real] [--schedules a,b] [--json F] [--set key=value] [model
// options]
#ifdef PIPESIM_HAS_EXECUTOR
#include <fmt/format.h>

#include <iostream>
#include <optional>
#include <sstream>
#include <type_traits>

#include "api/execute.h"
#include "api/schedule_selection.h"
#include "api/simulation.h"
#include "cli/commands.h"
#include "cli/execution_summary.h"
#include "cli/model_options.h"
#include "executor/mpi_transport.h"
#include "executor/scenario_training.h"
#include "sim/errors.h"

namespace pipesim {
namespace {

struct ExecuteArgs {
  std::string scenario;
  std::string schedules;
  std::string mode = "replay";
  std::string transport = "threads";
  std::string json_path;
  std::vector<std::string> overrides;
  ExecutorSection flags;  // the model options given on the command line, over the scenario's `executor:`
};

void execute(const ExecuteArgs& args) {
  check_output_path(args.json_path);
  const std::string path = args.scenario.empty() ? default_scenario_path() : args.scenario;
  const Scenario scenario = load_scenario(path, args.overrides);
  ExecuteOptions options;
  options.mode = args.mode == "real" ? ExecuteMode::kReal : ExecuteMode::kReplay;
  ExecutorSection section = scenario.executor;
  section.overlay(args.flags);
  options.setup = executor::training_setup_for(section, {});
  if (args.transport == "mpi" && options.mode != ExecuteMode::kReal)
    throw InputError("--transport mpi runs real mode only: add --mode real");
#ifdef PIPESIM_HAS_MPI
  std::optional<executor::MpiSession> mpi;
  if (args.transport == "mpi") {
    mpi.emplace();
    options.transport = ExecuteTransport::kMpi;
  }
  // Under mpiexec every rank runs its device's worker; rank 0 gathers the run and writes the outputs.
  const bool writes_outputs = !mpi || executor::MpiSession::rank() == 0;
#else
  if (args.transport == "mpi")
    throw InputError("--transport mpi: this pipesim was built without MPI (install mpich and libmpich-dev)");
  const bool writes_outputs = true;
#endif
  std::ostringstream table;
  nlohmann::json runs = nlohmann::json::array();
  table << fmt::format("{:<36} {:>6} {:>14} {:>12} {:>12}\n", "schedule", "mode", "makespan_ms", "loss_first",
                       "loss_last");
  for (const ScheduleRequest& request : select_schedules(scenario, args.schedules)) {
    const nlohmann::json summary = execution_summary(execute_schedule(scenario, request, options));
    table << fmt::format(
        "{:<36} {:>6} {:>14.3f} {:>12.5f} {:>12.5f}\n", summary["schedule"].get<std::string>(),
        summary["mode"].get<std::string>(), summary["makespan_ns"].get<double>() / 1e6,
        summary["first_batch_mean_loss"].get<double>(), summary["last_batch_mean_loss"].get<double>());
    runs.push_back(summary);
  }
  if (!writes_outputs) return;
  std::cout << table.str();
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
  cmd->add_option("--transport", args->transport,
                  "real mode: threads (one process) or mpi (one rank per device, under mpiexec -n DEVICES)")
      ->check(CLI::IsMember({"threads", "mpi"}))
      ->capture_default_str();
  cmd->add_option("--json", args->json_path,
                  "write a JSON summary of every run to this file ('-' for stdout)");
  cmd->add_option("--set", args->overrides, "override a scenario key, e.g. --set pipeline.microbatches=8");
  // Unset flags leave the scenario's `executor:` keys (or the executor's defaults) in place.
  const auto flag = [cmd](const std::string& name, auto& target, const std::string& help) {
    return cmd->add_option_function<typename std::remove_reference_t<decltype(target)>::value_type>(
        name, [&target](const auto& value) { target = value; }, help);
  };
  ExecutorSection& f = args->flags;
  flag("--model", f.model, "model: residual_mlp or gpt (executor.model)")
      ->check(CLI::IsMember(executor_model_names()));
  flag("--data", f.data, "data set: teacher, fashion_mnist, austen, fortunes or snippet (executor.data)")
      ->check(CLI::IsMember(executor_data_names()));
  flag("--width", f.width, "model width d; the MLP's hidden width is 4d (executor.width, default 16)")
      ->check(CLI::Range(1, 4096));
  flag("--blocks", f.blocks,
       "residual MLP / transformer blocks, raised until every stage has a unit "
       "(executor.blocks, default 4)")
      ->check(CLI::Range(0, 1024));
  flag("--samples", f.samples, "samples per microbatch (executor.samples, default 4)")
      ->check(CLI::Range(1, 1 << 20));
  flag("--lr", f.learning_rate, "SGD learning rate (executor.learning_rate, default 0.05)");
  flag("--seed", f.seed, "seed of the weights and the data draws (executor.seed, default 1)");
  cmd->callback([args] { execute(*args); });
}

}  // namespace pipesim
#endif
