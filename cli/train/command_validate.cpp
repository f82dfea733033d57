// pipesim validate [SCENARIO] [--schedules a,b] [--max-mape PCT] [--json F] [--csv F] [--profile P]
// [--runs R] [--max-preempted PCT] [--calibrate] [--set key=value] [model options]
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "api/schedule_selection.h"
#include "api/simulation.h"
#include "base/errors.h"
#include "calibrate/cpu_calibrate.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/train/model_options.h"
#include "cli/training.h"
#include "cli/validators.h"
#include "executor/scenario_training.h"
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
  std::string profile;  // empty: cpu-HOSTNAME.yaml here when `calibrate --cpu` wrote it, else cpu-vm
  double max_mape_percent = -1;
  double max_preempted_percent = 5;
  int runs = 3;
  bool calibrate = false;
  bool no_probe = false;
  bool rescale_to_probe = false;
  std::vector<std::string> overrides;
  ExecutorSection flags;  // the model options given on the command line, over the scenario's `executor:`
};

int validate(const ValidateArgs& args, const Limits& limits) {
  check_output_path(args.json_path);
  check_output_path(args.csv_path);
  const std::string path = args.scenario.empty() ? default_scenario_path() : args.scenario;
  const Scenario scenario = load_scenario(path, args.overrides);
  std::string profile_path;
  if (args.calibrate) {
    // Measured now, on this machine, before the runs it is to predict; into a directory of its own, made
    // fresh (mkdtemp), so that no file planted under a predictable name is written through.
    std::string directory = (std::filesystem::temp_directory_path() / "pipesim-validate-XXXXXX").string();
    if (!mkdtemp(directory.data()))
      throw InputError(fmt::format("validate --calibrate: cannot make a directory {}: {}", directory,
                                   std::strerror(errno)));
    profile_path = directory + "/cpu.yaml";
    calibrate_cpu_into(profile_path, CpuCalibrationOptions{}, "pipesim validate --calibrate");
    std::cerr << fmt::format("validate: calibrated this CPU into {}\n", profile_path);
  } else if (args.profile.empty() && std::filesystem::is_regular_file(default_cpu_profile_path())) {
    // What `pipesim calibrate --cpu` just wrote here, by default.
    profile_path = default_cpu_profile_path();
  } else {
    profile_path = resolve_profile_path(args.profile.empty() ? "cpu-vm" : args.profile);
  }
  const HardwareProfile profile = load_hardware_profile(profile_path);
  ValidationOptions options;
  options.limits = limits;
  ExecutorSection section = scenario.executor;
  section.overlay(args.flags);
  options.setup = executor::training_setup_for(section, {});
  options.profile = profile_path;
  ValidationReport report;
  report.scenario = scenario.name;
  report.profile =
      fmt::format("{} ({}, measured {})", profile_path, profile.device_name, profile.provenance.at("date"));
  report.profile_mismatches = profile_mismatches(profile);
  report.max_preempted_share = args.max_preempted_percent / 100;
  const bool probe = profile.device_kind == "cpu" && !args.no_probe;
  if (args.rescale_to_probe && !probe)
    throw InputError("--rescale-to-probe needs a CPU profile and the probe (not --no-probe)");
  if (probe) {
    report.speed_before = probe_machine_speed(profile);
    std::cerr << fmt::format("validate: machine before the runs: {}\n", report.speed_before->describe());
    if (args.rescale_to_probe) {
      options.cost_model_time_scale = 1 / report.speed_before->ratio;
      report.rescaled_to_probe = true;
    }
  }
  const std::vector<ScheduleRequest> requests = select_schedules(scenario, args.schedules);
  for (std::size_t i = 0; i < requests.size(); ++i) {
    std::cerr << fmt::format("validate: {} ({} of {}, {} run{})\n", requests[i].name, i + 1, requests.size(),
                             args.runs, args.runs == 1 ? "" : "s");
    report.schedules.push_back(validate_schedule_median(scenario, requests[i], options, profile, args.runs));
  }
  if (probe) report.speed_after = probe_machine_speed(profile);
  std::cout << validation_table(report);
  if (!args.json_path.empty()) write_file(args.json_path, validation_json_text(report));
  if (!args.csv_path.empty()) write_file(args.csv_path, validation_csv(report));
  if (!report.timing_trusted()) {
    std::cerr << fmt::format(
        "pipesim: the timing is not trusted: ops' threads were preempted for {:.1f} % of op time "
        "(--max-preempted "
        "{} %)\n",
        100 * report.worst_preempted_share(), args.max_preempted_percent);
    return kExitUntrustedTiming;
  }
  const double mape = throughput_mape(report, Prediction::kFitted);
  if (args.max_mape_percent >= 0 && mape > args.max_mape_percent) {
    std::cerr << fmt::format("pipesim: throughput MAPE with fitted costs {:.2f} % exceeds --max-mape {} %\n",
                             mape, args.max_mape_percent);
    return kExitCheckFailed;
  }
  return 0;
}

}  // namespace

void add_validate_command(CLI::App& app, const Limits& limits) {
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
  cmd->add_option(
      "--profile", args->profile,
      "CPU hardware profile for the cost-model prediction (default: cpu-HOSTNAME.yaml in the current "
      "directory, which `pipesim calibrate --cpu` writes, else the shipped cpu-vm)");
  cmd->add_option("--runs", args->runs, "runs per schedule; the median run is reported, with the spread")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--max-preempted", args->max_preempted_percent,
                  "exit 5 when ops' threads were preempted for more than this percentage of op time")
      ->check(finite_range(0.0, 100.0))
      ->capture_default_str();
  cmd->add_flag(
      "--calibrate", args->calibrate,
      "measure this CPU first (pipesim calibrate --cpu) and predict with that profile instead of --profile");
  cmd->add_flag(
      "--no-probe", args->no_probe,
      "skip the machine-speed probe (fp32 GEMMs against the CPU profile, about a second each, before "
      "and after the runs)");
  cmd->add_flag("--rescale-to-probe", args->rescale_to_probe,
                "multiply the cost model's durations by the profile's GEMM time over the probe's before the "
                "runs (the machine's drift since calibration; never the runs' own times)");
  cmd->add_option("--set", args->overrides, "override a scenario key, e.g. --set pipeline.stages=8");
  add_executor_flags(cmd, args->flags);
  cmd->callback([args, &limits] {
    const int status = validate(*args, limits);
    if (status != 0) throw CLI::RuntimeError(status);
  });
}

}  // namespace pipesim
