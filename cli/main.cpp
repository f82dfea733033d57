// The pipesim command. Every error becomes one line on stderr and a non-zero exit:
// 0 success (some schedules may be listed as skipped), 1 an error (bad input, a file that cannot be read or
// written, a failed run), 2 a command line that cannot be parsed, 3 nothing could run (every schedule was
// skipped), 4 a check failed (`check` found a broken invariant, `validate` a MAPE over --max-mape).
// README, "Exit codes".
#include <CLI/CLI.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "api/run_batch.h"
#include "base/did_you_mean.h"
#include "cli/commands.h"
#include "cli/error_message.h"
#include "cli/exit_codes.h"
#include "cli/process_setup.h"
#include "cli/training.h"
#include "cli/validators.h"
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
      ->check(pipesim::finite_range(0.001, 1e6));
  app.add_option_function<double>(
         "--max-ops", pipesim::set_ops_ceiling,
         "refuse a run estimated to simulate more ops than this (default 1e8: 10-20 s or more)")
      ->check(pipesim::finite_range(1, 1e15));
  app.add_option_function<double>("--max-total-ops", pipesim::set_total_ops_ceiling,
                                  "refuse a run, sweep, check or plan whose runs are estimated to simulate "
                                  "more ops in all than this (default 1e10)")
      ->check(pipesim::finite_range(1, 1e18));
  app.add_option_function<double>(
         "--max-tflop", pipesim::set_flop_ceiling_tflop,
         "refuse executor training estimated to compute more TFLOP than this (default 100)")
      ->check(pipesim::finite_range(1e-6, 1e9));
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
  pipesim::add_import_command(app);
  pipesim::add_show_command(app);
  pipesim::add_sweep_command(app);
  pipesim::add_plan_command(app);
  pipesim::add_training_commands(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's own verdict (already reported
  } catch (const CLI::ParseError& e) {
    std::string hint;
    if (argc > 1 && argv[1][0] != '-') {
      std::vector<std::string> names;
      for (const CLI::App* sub : app.get_subcommands({})) names.push_back(sub->get_name());
      bool known = false;
      for (const std::string& name : names) known = known || name == argv[1];
      if (!known) hint = pipesim::did_you_mean(argv[1], names);
    }
    const std::string what = hint.empty() ? e.what() : std::string("unknown command '") + argv[1] + "'";
    std::cerr << "pipesim: error: " << what << hint << " (see --help)\n";
    return pipesim::kExitUsage;
  } catch (const pipesim::NothingRanError& e) {
    std::cerr << "pipesim: error: " << pipesim::error_message(e) << "\n";
    return pipesim::kExitNothingRan;
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
