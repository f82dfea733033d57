// pipesim sweep SCENARIO [--stages 4,8,16] [--microbatches 4:64:x2] [--schedules a,b] [--param key=LIST]
//               [--set key=value] --out F.csv [-j N] [--mpi]
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <optional>
#include <tuple>

#include "api/run_batch.h"
#include "base/errors.h"
#include "cli/commands.h"
#include "distributed/mpi_session.h"
#include "report/csv.h"
#include "sweeps/sweep.h"
#include "sweeps/sweep_failure.h"

namespace pipesim {
namespace {

struct SweepArgs {
  SweepConfig config;
  std::string stages;
  std::string microbatches;
  std::vector<std::string> params;
  std::string out_path;
  std::string shard;
  bool quiet = false;
  bool mpi = false;
};

void sweep(SweepArgs& args) {
  SweepConfig& config = args.config;
  if (!args.stages.empty()) config.stages = expand_int_list(args.stages, "--stages", 1);
  if (!args.microbatches.empty())
    config.microbatches = expand_int_list(args.microbatches, "--microbatches", 1);
  for (const std::string& param : args.params) {
    const auto eq = param.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw InputError(fmt::format("--param '{}': expected key=LIST, e.g. memory_limit=1:2:+0.25", param));
    }
    const std::string key = param.substr(0, eq);
    config.params.emplace_back(key, expand_value_list(param.substr(eq + 1), "--param " + key));
  }
  if (!args.shard.empty()) std::tie(config.shard_index, config.shard_count) = parse_shard(args.shard);
  // Under mpiexec with --mpi, rank 0 writes the file and the other ranks only run what it hands them.
  std::optional<MpiSession> mpi;
  if (args.mpi) mpi.emplace();
  config.mpi = args.mpi;
  const bool leader = !mpi || MpiSession::rank() == 0;
  config.progress = leader && !args.quiet && isatty(STDERR_FILENO);
  if (leader) check_output_path(args.out_path);
  // Rows reach the file as they finish, in order; it replaces the target once the sweep is complete.
  std::optional<StreamedOutputFile> out;
  if (leader) out.emplace(args.out_path);
  SweepSink sink;
  sink.header = [&](const std::vector<std::string>& header) { out->write(csv_line(header)); };
  sink.row = [&](const std::vector<std::string>& row) { out->write(csv_line(row)); };
  const SweepSummary summary = run_sweep(config, sink);
  if (out) out->commit();
  // Every rank is done with MPI: what follows may end the command with an error without aborting the others.
  mpi.reset();
  if (!leader) return;
  std::cerr << fmt::format("{} runs written to {}", summary.rows, args.out_path);
  if (summary.skipped > 0) {
    std::cerr << fmt::format("; {} skipped: the schedule cannot run at that point (see the error column)",
                             summary.skipped);
  }
  if (summary.failed > 0) {
    std::cerr << fmt::format("; {} failed (see the error column)\n", summary.failed);
    // The CSV holds what succeeded; the exit status says that not everything did.
    throw InputError(fmt::format("sweep: {} of {} runs failed; the first is {}", summary.failed, summary.rows,
                                 first_failed_run(summary, args.out_path)));
  }
  std::cerr << "\n";
  // As `run`: skipped points are a normal answer, unless no point could run at all.
  if (summary.rows > 0 && static_cast<size_t>(summary.skipped) == summary.rows) {
    throw NothingRanError(fmt::format("sweep: none of the {} runs could run; the first is {}", summary.rows,
                                      first_skipped_run(summary, args.out_path)));
  }
}

}  // namespace

void add_sweep_command(CLI::App& app, const Limits& limits) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "run the product of lists of N, m, schedules and schedule parameters on all cores; one CSV row a run");
  cmd->add_option("scenario", args->config.scenario_path, "scenario YAML file")->required();
  add_allow_unmodelled_flag(cmd, args->config.allow_unmodelled);
  cmd->add_option("--stages,-N", args->stages,
                  "list of N: 4,8,16 or 4:64:x2 (geometric) or 2:10:+2 (arithmetic)");
  cmd->add_option("--microbatches,-m", args->microbatches, "list of m, same syntax");
  cmd->add_option("--schedules", args->config.schedules,
                  "comma-separated schedules (name, name:key=value, csv:PATH): registered schedules with "
                  "their defaults; default: the scenario's entries");
  cmd->add_option(
      "--entry", args->config.entries,
      "the scenario's schedule entries to run, 1-based and comma-separated (e.g. 1,3), with their "
      "parameters and pipeline: (-m, -N and --set still apply on top)");
  cmd->add_option(
         "--param", args->params,
         "a schedule parameter and its list, for every schedule that takes it (memory_limit=1:2:+0.25) or "
         "one schedule (zb-1p:memory_limit=1:2:+0.25)")
      ->allow_extra_args(false);
  cmd->add_option("--set", args->config.overrides,
                  "override a scenario key in every run, e.g. costs.comm_ms=0.5")
      ->allow_extra_args(false);
  cmd->add_option("--out,-o", args->out_path, "CSV file to write")->required();
  cmd->add_option("-j,--jobs", args->config.jobs, "threads (default: every core)")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--quiet,-q", args->quiet, "no progress bar");
  cmd->add_flag(
      "--mpi", args->mpi,
      "under mpiexec -n K: rank 0 hands the runs to the K - 1 other ranks (the longest first) and writes "
      "the CSV, the same bytes as -j 1; each rank runs one run at a time");
  cmd->add_option("--shard", args->shard,
                  "run only part i of n (i/n, e.g. 3/8): contiguous blocks of the product with about equal "
                  "expected work, each CSV with the header; shards 1..n in order, headers after the first "
                  "dropped, are the whole sweep's CSV");
  cmd->callback([args, &limits] {
    args->config.limits = limits;
    sweep(*args);
  });
}

}  // namespace pipesim
