// The pipesim command. Every error becomes one line on stderr and a non-zero exit:
// 0 success (some schedules may be listed as skipped), 1 an error (bad input, a file that cannot be read or
// written, a failed run), 2 a command line that cannot be parsed, 3 nothing could run (every schedule was
// skipped), 4 a check failed (`check` found a broken invariant, `validate` a MAPE over --max-mape), 5
// `validate`'s timing cannot be trusted (cli/exit_codes.h). README, "Exit codes".
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "api/run_batch.h"
#include "base/did_you_mean.h"
#include "base/error_message.h"
#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/process_setup.h"
#include "cli/training.h"
#include "cli/validators.h"
#include "io/data_dirs.h"
#include "pipesim_version.h"
#include "sim/limits.h"

namespace {

// A full disk or a closed pipe on standard output is a failure, not a success with lost output (also for
// --help and --version).
int with_stdout_checked(int exit_code) {
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "pipesim: error: standard output: write failed\n";
    return pipesim::kExitError;
  }
  return exit_code;
}

// The subcommands the command line selected, outermost first (the app itself first).
std::vector<const CLI::App*> selected_chain(const CLI::App& app) {
  std::vector<const CLI::App*> chain = {&app};
  while (!chain.back()->get_subcommands().empty()) chain.push_back(chain.back()->get_subcommands().front());
  return chain;
}

// What a parse error means when a name was mistyped: "unknown option '--jsno'; did you mean '--json'?" for
// an option no selected command has, "unknown command 'hff'; did you mean 'hf'?" for a subcommand; else "".
std::string mistyped_name(const CLI::App& app, int argc, char** argv) {
  const std::vector<const CLI::App*> chain = selected_chain(app);
  std::vector<std::string> options;  // with fallthrough, the outer commands' options hold too
  for (const CLI::App* cmd : chain) {
    for (const CLI::Option* option : cmd->get_options()) {
      for (const std::string& name : option->get_lnames()) options.push_back("--" + name);
    }
  }
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--") break;  // what follows is another tool's arguments (import megatron)
    if (arg.rfind("--", 0) != 0) continue;
    const std::string name = arg.substr(0, arg.find('='));
    if (std::find(options.begin(), options.end(), name) != options.end()) continue;
    return fmt::format("unknown option '{}'{}", name, pipesim::did_you_mean(name, options));
  }
  // A command that needs a subcommand and got a word that names none: the word after the last one selected.
  const CLI::App* last = chain.back();
  std::vector<std::string> names;
  for (const CLI::App* sub : last->get_subcommands({})) names.push_back(sub->get_name());
  if (names.empty()) return "";
  int next = 1;
  if (last != &app) {
    while (next < argc && argv[next] != last->get_name()) ++next;
    ++next;
  }
  if (next >= argc || argv[next][0] == '-') return "";
  const std::string hint = pipesim::did_you_mean(argv[next], names);
  return hint.empty() ? "" : fmt::format("unknown command '{}'{}", argv[next], hint);
}

}  // namespace

int main(int argc, char** argv) {
  pipesim::prepare_process(argv);
  CLI::App app{"pipesim: a discrete-event simulator of pipeline-parallel training schedules"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("pipesim ") + PIPESIM_VERSION);
  // Allowed before or after the subcommand: it bounds every run of run, sweep, check, show and export.
  app.fallthrough();
  // The ceilings every command passes down to its runs: set while the options are parsed, read when the
  // chosen command's callback runs (after the whole line is parsed).
  pipesim::Limits limits;
  app.add_option_function<double>(
         "--max-memory-gb", [&limits](double gb) { limits.memory_bytes = gb * 1e9; },
         "refuse a run whose estimated memory (trace, task graph, engine state) "
         "exceeds this many GB (default 4)")
      ->check(pipesim::finite_range(0.001, 1e6));
  app.add_option_function<double>(
         "--max-ops", [&limits](double ops) { limits.ops = ops; },
         "refuse a run estimated to simulate more ops than this (default 1e8: 10-20 s or more)")
      ->check(pipesim::finite_range(1, 1e15));
  app.add_option_function<double>(
         "--max-total-ops", [&limits](double ops) { limits.total_ops = ops; },
         "refuse a run, sweep, check or plan whose runs are estimated to simulate "
         "more ops in all than this (default 1e10)")
      ->check(pipesim::finite_range(1, 1e18));
  app.add_option_function<double>(
         "--max-tflop", [&limits](double tflop) { limits.flops = tflop * 1e12; },
         "refuse executor training estimated to compute more TFLOP than this (default 100)")
      ->check(pipesim::finite_range(1e-6, 1e9));
  app.add_option_function<std::string>(
      "--data-dir", pipesim::set_data_dir,
      "look for profiles, reference data and the default scenario here first "
      "(then PIPESIM_DATA_DIR, <prefix>/share/pipesim, the source tree)");
  try {
    // Inside the try: a command's defaults may look up data (extrapolate's reference data), and a
    // PIPESIM_DATA_DIR that is not a directory fails there, as one line.
    pipesim::add_run_command(app, limits);
    pipesim::add_schedules_command(app);
    pipesim::add_costs_command(app, limits);
    pipesim::add_calibrate_command(app, limits);
    pipesim::add_extrapolate_command(app, limits);
    pipesim::add_fidelity_command(app, limits);
    pipesim::add_check_command(app, limits);
    pipesim::add_export_command(app, limits);
    pipesim::add_import_command(app, limits);
    pipesim::add_show_command(app, limits);
    pipesim::add_sweep_command(app, limits);
    pipesim::add_plan_command(app, limits);
    pipesim::add_training_commands(app, limits);
    pipesim::check_output_options(app);
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return with_stdout_checked(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return with_stdout_checked(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return with_stdout_checked(app.exit(e));
  } catch (const CLI::Success&) {
    return with_stdout_checked(pipesim::kExitSuccess);  // an option that printed what it was asked (--keys)
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's own verdict (already reported
  } catch (const CLI::ParseError& e) {
    const std::string mistyped = mistyped_name(app, argc, argv);
    std::cerr << "pipesim: error: " << (mistyped.empty() ? e.what() : mistyped) << " (see --help)\n";
    return pipesim::kExitUsage;
  } catch (const pipesim::UsageError& e) {
    std::cerr << "pipesim: error: " << pipesim::error_message(e) << "\n";
    return pipesim::kExitUsage;
  } catch (const pipesim::NothingRanError& e) {
    std::cerr << "pipesim: error: " << pipesim::error_message(e) << "\n";
    return pipesim::kExitNothingRan;
  } catch (const std::exception& e) {
    std::cerr << "pipesim: error: " << pipesim::error_message(e) << "\n";
    return 1;
  }
  return with_stdout_checked(pipesim::kExitSuccess);
}
