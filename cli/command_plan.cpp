// pipesim plan SCENARIO --gpus G [--global-batch B] [--schedules ...] [--top K] [--tensor LIST] [--context
// LIST] [--pipeline LIST] [--microbatch-sizes LIST] [--recompute LIST] [--zero LIST] [--csv F] [-j N] [--mpi]
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <sstream>

#include "api/schedule_selection.h"
#include "api/unmodelled_check.h"
#include "base/did_you_mean.h"
#include "base/errors.h"
#include "base/text_file.h"
#include "cli/commands.h"
#include "distributed/mpi_session.h"
#include "import/pytorch_trace.h"
#include "import/trace_calibration.h"
#include "io/scenario.h"
#include "plan/plan.h"
#include "plan/plan_json.h"
#include "plan/plan_report.h"
#include "report/progress_bar.h"
#include "sweeps/sweep.h"

namespace pipesim {
namespace {

struct PlanArgs {
  std::string scenario_path;
  std::vector<std::string> overrides;
  PlanOptions options;
  std::string schedules;
  std::string tensor, context, expert, pipeline, microbatch_sizes, recompute, zero;
  bool no_sequence_parallel = false;
  std::string csv_path;
  std::string json_path;
  std::vector<std::string> trace_costs;
  bool quiet = false;
  bool mpi = false;
  bool allow_unmodelled = false;
};

std::vector<Recompute> parse_recompute_list(const std::string& text) {
  std::vector<Recompute> out;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ',');) {
    const NameTable<Recompute>& table = recompute_names();
    const auto found =
        std::find_if(table.begin(), table.end(), [&](const auto& entry) { return entry.first == item; });
    if (found == table.end()) {
      throw InputError(
          fmt::format("--recompute '{}': unknown recomputation '{}' (expected none, selective or full, "
                      "comma-separated){}",
                      text, item, did_you_mean(item, names_of(table))));
    }
    out.push_back(found->second);
  }
  return out;
}

void plan(PlanArgs& args) {
  Scenario scenario = load_scenario(args.scenario_path, args.overrides);
  scenario.allow_unmodelled = args.allow_unmodelled;
  require_modelled(scenario);  // before the search: no configuration of a stand-in is ranked silently
  if (!args.trace_costs.empty()) {
    // The traced run's op times over the model's, for every configuration the search tries.
    TracedActions traced;
    for (const std::string& path : args.trace_costs) {
      read_pytorch_trace(read_text_file(path, "Chrome trace"), path, traced);
    }
    const OpTimeScale scale =
        op_time_scale_from_trace(scenario, traced, fmt::format("{}", fmt::join(args.trace_costs, ", ")));
    if (scenario.transformer) scenario.transformer->profile.op_time_scale = scale;
  }
  PlanSpaceOptions& space = args.options.space;
  if (!args.schedules.empty()) space.schedules = select_schedules(scenario, args.schedules);
  if (!args.tensor.empty()) space.tensor = expand_int_list(args.tensor, "--tensor", 1);
  if (!args.context.empty()) space.context = expand_int_list(args.context, "--context", 1);
  if (!args.expert.empty()) space.expert = expand_int_list(args.expert, "--expert", 1);
  if (!args.pipeline.empty()) space.pipeline = expand_int_list(args.pipeline, "--pipeline", 1);
  if (!args.microbatch_sizes.empty())
    space.microbatch_sizes = expand_int_list(args.microbatch_sizes, "--microbatch-sizes", 1);
  if (!args.recompute.empty()) space.recompute = parse_recompute_list(args.recompute);
  if (!args.zero.empty()) {
    space.zero = expand_int_list(args.zero, "--zero", 0);
    for (int z : space.zero) {
      if (z > 3) throw InputError(fmt::format("--zero '{}': {} is not a ZeRO stage (0 to 3)", args.zero, z));
    }
  }
  space.sequence_parallel = !args.no_sequence_parallel;
  std::optional<MpiSession> mpi;
  if (args.mpi) mpi.emplace();
  args.options.mpi = args.mpi;
  const bool leader = !mpi || MpiSession::rank() == 0;
  args.options.progress = leader && !args.quiet && ProgressBar::stderr_is_terminal();
  if (leader && !args.csv_path.empty()) check_output_path(args.csv_path);
  if (leader && !args.json_path.empty() && args.json_path != "-") check_output_path(args.json_path);
  const PlanResult result = run_plan(scenario, args.options);
  mpi.reset();  // every rank is done with MPI
  if (!leader) return;
  // --json -: standard output carries the JSON document alone (the report goes nowhere).
  if (args.json_path != "-") std::cout << format_plan(scenario, args.options, result);
  if (!args.json_path.empty()) {
    const std::string json = plan_json(scenario.name, result).dump(1) + "\n";
    write_file(args.json_path, json);
    if (args.json_path != "-")
      std::cerr << fmt::format("{} candidates written to {} (JSON)\n", result.rows.size(), args.json_path);
  }
  if (!args.csv_path.empty()) {
    write_file(args.csv_path, plan_csv(result));
    std::cerr << fmt::format("{} candidates written to {}\n", result.rows.size(), args.csv_path);
  }
}

}  // namespace

void add_plan_command(CLI::App& app, const Limits& limits) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plan",
      "search tensor x pipeline x data parallelism, microbatching, schedule, recomputation and ZeRO for a "
      "transformer scenario on G GPUs; prints the fastest configurations that fit in memory");
  cmd->add_option("scenario", args->scenario_path, "transformer scenario YAML (model: and hardware:)")
      ->required();
  add_allow_unmodelled_flag(cmd, args->allow_unmodelled);
  cmd->add_option("--gpus,-G", args->options.space.gpus, "GPUs in the job")
      ->required()
      ->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--global-batch,-B", args->options.space.global_batch,
                  "samples per optimizer step of the whole job (default: the scenario's)")
      ->check(CLI::Range(1, kMaxPlanGlobalBatch));
  cmd->add_option("--schedules", args->schedules,
                  fmt::format("comma-separated schedules with parameters (name:key=value); PACI without "
                              "accumulation tries every power of two dividing m (default: {})",
                              default_plan_schedules()));
  cmd->add_option(
      "--tensor", args->tensor,
      "tensor-parallel degrees to try (default: divisors of the node's GPUs that split the heads and "
      "the key/value heads)");
  cmd->add_option("--context", args->context,
                  "context-parallel degrees to try, e.g. 1,2,4 (default: 1; ring attention, each c with 2c "
                  "dividing the sequence)");
  cmd->add_option(
      "--expert", args->expert,
      "expert-parallel degrees to try, of the data-parallel ranks, e.g. 1,8 (default: every power of "
      "two dividing the routed experts and d; 1 for a dense model)");
  cmd->add_option("--pipeline", args->pipeline,
                  "pipeline degrees to try (default: every divisor of G/(t c) up to "
                  "the layers)");
  cmd->add_option("--microbatch-sizes", args->microbatch_sizes,
                  "samples per microbatch to try (default: 1,2,4,8)");
  cmd->add_option("--recompute", args->recompute,
                  "recomputation to try: none, selective, full (default: all three)");
  cmd->add_option("--zero", args->zero,
                  "ZeRO stages to try, 0 to 3 (default: all; 0 alone without data "
                  "parallelism)");
  cmd->add_flag("--no-sequence-parallel", args->no_sequence_parallel,
                "tensor parallelism without sequence parallelism (default: with it, as Megatron users run)");
  cmd->add_option(
         "--trace-costs", args->trace_costs,
         "Chrome traces of a PyTorch pipelining run of the scenario's own configuration (one per rank "
         "or merged): each op kind's predicted times are scaled by traced over predicted for every "
         "configuration searched")
      ->check(CLI::ExistingFile);
  cmd->add_option("--top,-k", args->options.top, "configurations shown of each kind (default 5)")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--set", args->overrides, "override a scenario key, e.g. hardware.profile=a100-sxm4-80gb")
      ->allow_extra_args(false);
  cmd->add_option("--csv", args->csv_path, "also write every candidate, its fate and figures, to this CSV");
  cmd->add_option("--json", args->json_path,
                  "also write the search as JSON (schema/pipesim-plan.v1.schema.json: every candidate's "
                  "configuration, fate, bounds and figures) to this file; - for stdout alone");
  cmd->add_option("-j,--jobs", args->options.jobs,
                  "threads (default: every core); the result is the same for any")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--quiet,-q", args->quiet, "no progress bar");
  cmd->add_flag(
      "--mpi", args->mpi,
      "under mpiexec -n K: rank 0 searches and hands the simulations to the K - 1 other ranks; the same "
      "output as -j 1");
  args->options.top = 5;
  cmd->callback([args, &limits] {
    args->options.limits = limits;
    plan(*args);
  });
}

}  // namespace pipesim
