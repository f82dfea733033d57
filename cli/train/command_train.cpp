// pipesim train STUDY.yaml [--quick] [--out DIR]: train a learning study's runs in replay mode, write their
// curves (DIR/NAME.csv, resumed when interrupted) and the time-to-target table (DIR/NAME-table.md, also
// printed). plots/study.py draws the curves.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <iostream>

#include "base/errors.h"
#include "cli/commands.h"
#include "report/progress_bar.h"
#include "train/study_gaps.h"
#include "train/study_report.h"
#include "train/study_runner.h"

namespace pipesim {
namespace {

struct TrainArgs {
  std::string study;
  bool quick = false;
  std::string out_dir = "study-results";
  int jobs = 1;
  bool quiet = false;
};

void train(const TrainArgs& args, const Limits& limits) {
  Study study = load_study(args.study, args.quick);
  study.limits = limits;
  std::error_code made;
  std::filesystem::create_directories(args.out_dir, made);
  if (made || !std::filesystem::is_directory(args.out_dir)) {
    throw InputError(fmt::format("--out {}: cannot create the output directory: {}", args.out_dir,
                                 made ? made.message() : "a file of that name is in the way"));
  }
  const std::string stem =
      (std::filesystem::path(args.out_dir) / (study.name + (args.quick ? "-quick" : ""))).string();
  const std::string csv_path = stem + ".csv";
  StudyCurves curves;
  // The bar redraws one line with '\r': on a terminal only, so that logs stay readable.
  const auto started = std::chrono::steady_clock::now();
  const StudyProgress progress =
      run_study(study, csv_path, curves, ProgressBar::stderr_is_terminal() && !args.quiet, args.jobs);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // What the curves file held that could not be resumed, and was therefore trained again.
  for (const std::string& why : progress.distrusted)
    std::cerr << fmt::format("{}: retrained: {}\n", csv_path, why);
  std::string table = format_study_table(study, summarize_study(study, curves));
  const std::string sweep = format_lr_sweep_table(study, summarize_lr_sweep(study, curves));
  if (!sweep.empty()) table += "\n" + sweep;
  // Paired per-seed gaps to the flush, and the flushes' noise floor: a table here, every point in
  // NAME-gaps.csv (plots/study.py draws them against the optimizer steps).
  const std::vector<PairedGap> gaps = paired_gaps(study, curves);
  if (!gaps.empty()) {
    table += "\n" + format_paired_gap_table(gaps);
    write_file(stem + "-gaps.csv", paired_gap_csv(gaps));
  }
  write_file(stem + "-table.md", table);
  // The wall time of this invocation: the runs trained now (resumed runs cost a read).
  std::cout << fmt::format(
                   "{}: {} runs ({} resumed from {}, {} trained in {:.1f} s of wall time with -j{})\n\n",
                   study.name, progress.runs_total, progress.runs_resumed, csv_path, progress.runs_executed,
                   wall_s, args.jobs)
            << table;
}

}  // namespace

void add_train_command(CLI::App& app, const Limits& limits) {
  auto args = std::make_shared<TrainArgs>();
  CLI::App* cmd = app.add_subcommand(
      "train",
      "train a learning study (schedules x optimizers x corrections x seeds) and report time to target");
  cmd->add_option("study", args->study, "study YAML file (e.g. studies/one-step-delay.yaml)")->required();
  cmd->add_flag("--quiet,-q", args->quiet, "no progress bar");
  cmd->add_flag("--quick", args->quick, "use the study's quick: section (a smaller budget, fewer seeds)");
  cmd->add_option("-o,--out", args->out_dir, "directory for NAME.csv (curves) and NAME-table.md")
      ->capture_default_str();
  cmd->add_option("-j,--jobs", args->jobs,
                  "runs trained at once, one core each (the curves are the same for any value; measured "
                  "seconds grow when the cores are shared)")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  cmd->callback([args, &limits] { train(*args, limits); });
}

}  // namespace pipesim
