// The pipesim command. Every error becomes one line on stderr and a non-zero exit.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"
#include "cli/error_message.h"
#include "cli/process_setup.h"
#include "io/data_dirs.h"
#include "pipesim_version.h"
#include "sim/resource_estimate.h"

int main(int argc, char** argv) {
  pipesim::prepare_process(argv);
  CLI::App app{"pipesim: a discrete-event simulator of pipeline-parallel training schedules"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("pipesim ") + PIPESIM_VERSION);
  // Allowed before or after the subcommand: it bounds every run of run, sweep, check, show and export.
  app.fallthrough();
  app.add_option_function<double>("--max-memory-gb", pipesim::set_memory_ceiling_gb,
                                  "refuse a run whose estimated memory (trace, task graph, engine state) "
                                  "exceeds this many GB (default 4)")
      ->check(CLI::Range(0.001, 1e6));
  app.add_option_function<std::string>(
      "--data-dir", pipesim::set_data_dir,
      "look for profiles, reference data and the default scenario here first "
      "(then PIPESIM_DATA_DIR, <prefix>/share/pipesim, the source tree)");
  pipesim::add_run_command(app);
  pipesim::add_schedules_command(app);
  pipesim::add_costs_command(app);
  pipesim::add_calibrate_command(app);
  pipesim::add_extrapolate_command(app);
  pipesim::add_check_command(app);
  pipesim::add_export_command(app);
  pipesim::add_show_command(app);
  pipesim::add_sweep_command(app);
#ifdef PIPESIM_HAS_EXECUTOR
  pipesim::add_execute_command(app);
  pipesim::add_validate_command(app);
  pipesim::add_train_command(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "pipesim: error: " << pipesim::error_message(e) << "\n";
    return 1;
  }
  // A full disk or a closed pipe on standard output is a failure, not a success with lost output.
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "pipesim: error: standard output: write failed\n";
    return 1;
  }
  return 0;
}
