// pipesim check [SCENARIO] [--schedules a,b] [-N 2,4] [-m 1,N] [--accumulation 1,2] [--seeds 10] [--json F]
// [--junit F]. Exit code 4 and the smallest counterexample when a schedule breaks one of its weight-version
// guarantees; 1 for bad input (cli/exit_codes.h).
#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_codes.h"
#include "cli/validators.h"
#include "sweeps/check.h"
#include "sweeps/check_report.h"

namespace pipesim {
namespace {

struct CheckArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  CheckOptions options;
  std::string json_path;
  std::string junit_path;
};

int check(const CheckArgs& args) {
  for (const std::string* out : {&args.json_path, &args.junit_path}) check_output_path(*out);
  const auto begin = std::chrono::steady_clock::now();
  const CheckReport report = args.scenario.empty()
                                 ? check_grid(args.options)
                                 : check_scenario(load_scenario(args.scenario, args.overrides), args.options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  // Standard output carries one document: the report, or the JSON for --json -.
  if (args.json_path != "-")
    std::cout << render_check_report(report) << fmt::format("checked in {:.1f} s\n", seconds);
  if (!args.json_path.empty()) write_file(args.json_path, check_report_json(report));
  if (!args.junit_path.empty()) write_file(args.junit_path, check_report_junit(report, seconds));
  return report.passed() ? kExitSuccess : kExitCheckFailed;
}

}  // namespace

void add_check_command(CLI::App& app, const Limits& limits) {
  auto args = std::make_shared<CheckArgs>();
  CheckOptions& o = args->options;
  CLI::App* cmd = app.add_subcommand(
      "check",
      "verify every schedule's drift, staleness, weight-version and in-flight guarantees over a grid of "
      "N, m, a and seeds with random durations; exit 4 with the smallest counterexample on a violation (1: "
      "bad input)");
  cmd->add_option("scenario", args->scenario,
                  "check this scenario's schedules (its N, m and costs) over the seeds");
  cmd->add_option("--set", args->overrides, "override a scenario key, e.g. --set pipeline.microbatches=16");
  cmd->add_option("--schedules", o.schedules, "grid: only these registered schedules")->delimiter(',');
  cmd->add_option("--json", args->json_path,
                  "also write the report as JSON (format pipesim-check) to this file; - for stdout");
  cmd->add_option("--junit", args->junit_path,
                  "also write JUnit XML (one test case per schedule) for CI systems to this file");
  cmd->add_option("--stages,-N", o.stages, "grid: values of N")->delimiter(',')->check(CLI::PositiveNumber);
  cmd->add_option("--microbatches,-m", o.microbatches,
                  "grid: values of m, integers or terms in N (N, 2N, N-1)")
      ->delimiter(',');
  cmd->add_option("--accumulation", o.accumulation,
                  "grid: values of a for schedules that take 'accumulation'")
      ->delimiter(',');
  // Bounds that keep every noisy duration within the engine's range: a 5-sigma draw at sigma 3 multiplies an
  // op by e^15 ≈ 3·10^6, a straggler by at most 1000 more.
  cmd->add_option("--seeds", o.seeds,
                  "seeds per grid point (seed 0: the costs as given); the whole check's work is estimated "
                  "first and bounded by --max-total-ops")
      ->check(CLI::Range(1, 1000000000));
  cmd->add_option("--jitter", o.noise.jitter_sigma, "sigma of the lognormal per-op duration factor, 0 to 3")
      ->check(finite_range(0, 3));
  cmd->add_option("--stage-speeds", o.noise.stage_speed_sigma,
                  "sigma of the lognormal per-stage speed factor, 0 to 3")
      ->check(finite_range(0, 3));
  cmd->add_option("--stragglers", o.noise.straggler_probability, "probability that an op is a straggler")
      ->check(finite_range(0.0, 1.0));
  cmd->add_option("--straggler-factor", o.noise.straggler_factor,
                  "a straggler's duration multiplier, 1 to 1000")
      ->check(finite_range(1, 1000));
  cmd->add_option("-j,--jobs,--threads", o.threads, "worker threads (default: every core)")
      ->check(CLI::Range(0, 4096));
  cmd->callback([args, &limits] {
    args->options.limits = limits;
    // Lists trim the spaces around items, as run's --schedules does ("paci, zb-h1").
    for (auto* list : {&args->options.schedules, &args->options.microbatches, &args->options.accumulation}) {
      for (std::string& item : *list) {
        const auto first = item.find_first_not_of(' ');
        item = first == std::string::npos ? "" : item.substr(first, item.find_last_not_of(' ') - first + 1);
      }
    }
    if (const int code = check(*args); code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace pipesim
