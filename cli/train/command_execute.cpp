// pipesim execute [SCENARIO] [--mode replay|real] [--schedules a,b] [--json F] [--set key=value] [model
// options]
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <iostream>
#include <optional>
#include <sstream>
#include <type_traits>

#include "api/schedule_selection.h"
#include "api/simulation.h"
#include "base/errors.h"
#include "cli/commands.h"
#include "cli/train/execution_summary.h"
#include "cli/train/model_options.h"
#include "cli/validators.h"
#include "distributed/mpi_session.h"
#include "executor/scenario_training.h"
#include "report/result_record.h"
#include "report/trace_writer.h"
#include "train/execute.h"
#include "train/execution_report.h"

namespace pipesim {
namespace {

struct ExecuteArgs {
  std::string scenario;
  std::string schedules;
  std::string mode = "replay";
  std::string transport = "threads";
  std::string json_path;
  std::string trace_path;
  std::string csv_path;
  std::string clock = "measured";
  int eval_every = 0;
  int validation_samples = 256;
  std::vector<std::string> overrides;
  NumericsDumpOptions dump;
  std::string optimizer = "sgd";
  double weight_decay = 0;
  ExecutorSection flags;  // the model options given on the command line, over the scenario's `executor:`
};

void execute(const ExecuteArgs& args, const Limits& limits) {
  check_output_path(args.json_path);
  check_output_path(args.trace_path);
  check_output_path(args.csv_path);
  const std::string path = args.scenario.empty() ? default_scenario_path() : args.scenario;
  const Scenario scenario = load_scenario(path, args.overrides);
  ExecuteOptions options;
  options.limits = limits;
  options.mode = args.mode == "real" ? ExecuteMode::kReal : ExecuteMode::kReplay;
  ExecutorSection section = scenario.executor;
  section.overlay(args.flags);
  options.setup = executor::training_setup_for(section, {});
  options.setup.optimizer = executor::optimizer_with_defaults(executor::parse_optimizer_kind(args.optimizer));
  options.setup.optimizer.weight_decay = static_cast<float>(args.weight_decay);
  options.measured_clock = args.clock == "measured";
  options.eval_every_batches = args.eval_every;
  options.validation_samples = args.validation_samples;
  options.dump = args.dump;
  if (args.transport == "mpi" && options.mode != ExecuteMode::kReal)
    throw InputError("--transport mpi runs real mode only: add --mode real");
  std::optional<MpiSession> mpi;  // throws InputError naming the option in a build without MPI
  if (args.transport == "mpi") {
    mpi.emplace("--transport mpi");
    options.transport = ExecuteTransport::kMpi;
  }
  // Under mpiexec every rank runs its device's worker; rank 0 gathers the run and writes the outputs.
  const bool writes_outputs = !mpi || MpiSession::rank() == 0;
  std::ostringstream table;
  nlohmann::json runs = nlohmann::json::array();
  std::vector<SimulationResult> measured;
  std::string curves = training_curve_csv_header();
  table << fmt::format("{:<32} {:>6} {:>12} {:>12} {:>8} {:>10} {:>10} {:>10}\n", "schedule", "mode",
                       "makespan_ms", "samples/s", "bubble %", "loss_first", "loss_last", "val_loss");
  const std::vector<ScheduleRequest> requests = select_schedules(scenario, args.schedules);
  std::vector<std::string> diverged;  // schedules whose loss stopped being a number
  if (args.dump.any() && requests.size() != 1) {
    throw InputError(fmt::format(
        "the numerics dumps describe one run: choose one schedule with --schedules (the scenario gives {})",
        requests.size()));
  }
  for (const ScheduleRequest& request : requests) {
    const ExecutedSchedule run = execute_schedule(scenario, request, options);
    if (!writes_outputs) continue;  // an mpi rank other than 0: its part of the run went to rank 0
    nlohmann::json summary = execution_summary(run);
    measured.push_back(measured_result(run));
    const SimulationResult& result = measured.back();
    summary["measured"] = nlohmann::json::parse(result_record(result).dump());
    curves += training_curve_csv_rows(run);
    const std::string val_loss =
        run.evaluations.empty() ? "-" : fmt::format("{:.5f}", run.evaluations.back().loss);
    table << fmt::format("{:<32} {:>6} {:>12.3f} {:>12.1f} {:>8.2f} {:>10.5f} {:>10.5f} {:>10}\n",
                         summary["schedule"].get<std::string>(), summary["mode"].get<std::string>(),
                         summary["makespan_ns"].get<double>() / 1e6, result.metrics.throughput_samples_per_s,
                         100 * result.metrics.bubble_fraction, summary["first_batch_mean_loss"].get<double>(),
                         summary["last_batch_mean_loss"].get<double>(), val_loss);
    const double last_loss = summary["last_batch_mean_loss"].get<double>();
    if (!std::isfinite(last_loss) ||
        (!run.evaluations.empty() && !std::isfinite(run.evaluations.back().loss)))
      diverged.push_back(summary["schedule"].get<std::string>());
    runs.push_back(summary);
  }
  if (!writes_outputs) return;
  std::cout << table.str();
  if (!diverged.empty()) {
    std::cout << fmt::format(
        "note: the loss of {} is not a number: training diverged (lower --lr, or the scenario's "
        "executor.learning_rate)\n",
        fmt::join(diverged, ", "));
  }
  if (options.mode == ExecuteMode::kReal && !measured.empty() && !runs.front()["timing_valid"].get<bool>()) {
    std::cout
        << "note: more devices than allowed cores, so the workers were not pinned: the wall-clock figures "
           "above are not timing (use --mode replay)\n";
  }
  if (!args.json_path.empty())
    write_file(args.json_path, nlohmann::json{{"scenario", scenario.name}, {"runs", runs}}.dump(2) + "\n");
  if (!args.trace_path.empty()) write_file(args.trace_path, chrome_trace_json(measured, scenario.name));
  if (!args.csv_path.empty()) write_file(args.csv_path, curves);
}

}  // namespace

void add_execute_command(CLI::App& app, const Limits& limits) {
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
  cmd->add_option(
      "--json", args->json_path,
      "write every run's summary and measured record (the simulator's result record, computed from "
      "the executed ops: period, throughput, bubble, per-stage drift, staleness, versions, in-flight, "
      "memory) to this file ('-' for stdout)");
  cmd->add_option(
      "--trace", args->trace_path,
      "write the executed runs as a Perfetto / Chrome trace, the format `pipesim run --trace` writes");
  cmd->add_option("--csv", args->csv_path,
                  "write the training curves (schedule, step, samples, time_s, clock, train_loss, val_loss, "
                  "val_accuracy) to this file ('-' for stdout)");
  cmd->add_option(
         "--clock", args->clock,
         "replay mode: measured (virtual clocks advance by each op's own CPU time, measured in a first "
         "pass) or scenario (by the scenario's costs: deterministic timestamps, one pass)")
      ->check(CLI::IsMember({"measured", "scenario"}))
      ->capture_default_str();
  cmd->add_option("--eval-every", args->eval_every,
                  "replay mode: evaluate on held-out samples every K batches (0: after the last batch only; "
                  "real mode evaluates the final weights)")
      ->check(CLI::Range(0, 1 << 30))
      ->capture_default_str();
  cmd->add_option("--validation-samples", args->validation_samples, "held-out samples per evaluation")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--set", args->overrides, "override a scenario key, e.g. --set pipeline.microbatches=8");
  cmd->add_option(
      "--dump-init", args->dump.init_dir,
      "replay mode, one schedule: write DIR/manifest.json (the model's units, tensors, shapes and "
      "conventions, the update rule, every step's learning rate) and the initial weights as .npy "
      "(DIR/init/unitNN.NAME.npy)");
  cmd->add_option("--dump-batches", args->dump.batches_dir,
                  "replay mode, one schedule: write every microbatch the run trains on (DIR/stepKKKK-mbJJ-"
                  "inputs.npy and -labels.npy, index in DIR/batches.json)");
  cmd->add_option("--dump-weights-at", args->dump.weights_at_steps,
                  "with --dump-init: write each stage's weights after its K-th optimizer step to "
                  "DIR/weights-step-K/ (repeatable)")
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_option(
         "--optimizer", args->optimizer,
         "the update rule: sgd (plain, the default), adamw, nadam, muon, lion, adan or soap, at --lr with "
         "each optimizer's published betas")
      ->check(CLI::IsMember(executor::optimizer_kind_names()))
      ->capture_default_str();
  cmd->add_option("--weight-decay", args->weight_decay, "decoupled weight decay on matrices (0: none)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  add_executor_flags(cmd, args->flags);
  cmd->callback([args, &limits] { execute(*args, limits); });
}

}  // namespace pipesim
