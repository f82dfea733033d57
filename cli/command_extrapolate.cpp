// pipesim extrapolate [--csv F] [--markdown F] [--profile P] [--data DIR] [--models 1.5B,28.3B] [--batches N]
//                     [--blocking-comm]
#include <fmt/format.h>

#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "io/zb_reference.h"
#include "report/progress_bar.h"
#include "sweeps/extrapolate.h"
#include "sweeps/extrapolate_report.h"

namespace pipesim {

void add_extrapolate_command(CLI::App& app, const Limits& limits) {
  auto options = std::make_shared<ExtrapolateOptions>();
  auto csv_path = std::make_shared<std::string>();
  auto markdown_path = std::make_shared<std::string>();
  auto models = std::make_shared<std::string>();
  options->data_dir = default_reference_data_dir();
  CLI::App* cmd = app.add_subcommand(
      "extrapolate",
      "every schedule on the Zero Bubble paper's 1.5B-28.3B models, beside the published figures");
  cmd->add_option("--csv", *csv_path, "write one row per (model, m, schedule) to this CSV file");
  cmd->add_option("--markdown", *markdown_path, "write the report as Markdown to this file");
  cmd->add_option("--profile", options->profile, "hardware profile (name or path; default a100-sxm4-80gb)");
  cmd->add_option("--data", options->data_dir,
                  "directory of the zb_*.csv reference data (default: share/data/zero_bubble)");
  cmd->add_option("--models", *models, "comma-separated subset of the models, e.g. 1.5B,28.3B");
  cmd->add_option("--batches", options->batches, "batches simulated per run")->check(CLI::Range(2, 1000));
  cmd->add_flag("--blocking-comm", options->blocking_comm,
                "transfers hold the sender's and the receiver's compute streams (Megatron's blocking p2p) "
                "instead of overlapping compute");
  cmd->callback([=, &limits] {
    options->limits = limits;
    std::stringstream list(*models);
    for (std::string name; std::getline(list, name, ',');) {
      if (!name.empty()) options->models.push_back(name);
    }
    check_output_path(*csv_path);
    check_output_path(*markdown_path);
    // On a terminal one status line, rewritten at each step and erased at the end; otherwise a line a step.
    const bool terminal = ProgressBar::stderr_is_terminal();
    const Extrapolation e = run_extrapolation(*options, [terminal](const std::string& step) {
      std::cerr << (terminal ? "\r\033[K" : "") << "extrapolate: " << step << (terminal ? "" : "\n")
                << std::flush;
    });
    if (terminal) std::cerr << "\r\033[K" << std::flush;
    std::cout << extrapolation_summary(e);
    if (!csv_path->empty()) write_file(*csv_path, extrapolation_csv(e));
    if (!markdown_path->empty()) write_file(*markdown_path, extrapolation_markdown(e));
  });
}

}  // namespace pipesim
