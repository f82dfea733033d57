// pipesim fidelity [PATH...] [--csv F] [--markdown F]: predictions beside what published runs measured.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "io/data_dirs.h"
#include "report/progress_bar.h"
#include "sweeps/fidelity.h"
#include "sweeps/fidelity_report.h"

namespace pipesim {

void add_fidelity_command(CLI::App& app, const Limits& limits) {
  struct Args {
    std::vector<std::string> paths;
    std::string csv_path, markdown_path;
    bool quiet = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* cmd = app.add_subcommand(
      "fidelity",
      "run published training runs (scenarios with a measured: section) and compare each prediction with "
      "what the run measured: the error per run, per source and over all");
  cmd->add_option("paths", args->paths,
                  "scenario files or directories of them (default: scenarios/published, the shipped runs)");
  cmd->add_option("--csv", args->csv_path, "write one row per measured figure to this CSV file");
  cmd->add_option("--markdown", args->markdown_path, "write the tables as Markdown to this file");
  cmd->add_flag("--quiet,-q", args->quiet, "no progress bar");
  cmd->callback([args, &limits] {
    check_output_path(args->csv_path);
    check_output_path(args->markdown_path);
    const std::vector<std::string> paths =
        args->paths.empty()
            ? std::vector<std::string>{find_data_path("scenarios/published", "the published runs")}
            : args->paths;
    const std::vector<Scenario> scenarios = measured_scenarios(paths);
    Fidelity f;
    {
      ProgressBar progress(scenarios.size(), "runs", ProgressBar::stderr_is_terminal() && !args->quiet);
      f = run_fidelity(scenarios, limits, [&](size_t done) { progress.update(done); });
    }
    std::cout << fidelity_summary(f);
    if (!args->csv_path.empty()) write_file(args->csv_path, fidelity_csv(f));
    if (!args->markdown_path.empty()) write_file(args->markdown_path, fidelity_markdown(f));
  });
}

}  // namespace pipesim
