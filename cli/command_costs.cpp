// pipesim costs [SCENARIO] [--entry K] [--json F] [--set key=value]
// pipesim costs --fit-report [--profile P] [--data DIR]
// pipesim costs --layer-times CSV --profile P
// Shows what the cost model derived per stage, so a user can see where a prediction comes from, and puts its
// predictions beside published (A100) or measured (torch_layer_times.py) op times.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "api/stage_costs.h"
#include "api/unmodelled_check.h"
#include "base/errors.h"
#include "cli/commands.h"
#include "cost_models/transformer/device.h"
#include "io/hardware_profile_reader.h"
#include "io/layer_times.h"
#include "io/zb_reference.h"
#include "report/fit_report.h"
#include "report/format.h"

namespace pipesim {
namespace {

struct CostsArgs {
  std::string scenario;
  std::string json_path;
  std::vector<std::string> overrides;
  int entry = 0;
  bool fit_report = false;
  std::string profile = "a100-sxm4-80gb";
  bool profile_given = false;
  std::string layer_times_path;
  std::string data_dir = default_reference_data_dir();
  bool allow_unmodelled = false;
};

// Which of the profile's measurements the figures rest on, and what the table leaves out.
std::string profile_terms(const HardwareProfile& p) {
  const bool transposed = !p.gemm_nt.empty() || !p.gemm_tn.empty();
  return fmt::format(
             "profile terms: GEMMs {}; memory-bound kernels at {:.0f} GB/s ({}); {}",
             transposed ? "per layout (F nt, I nn, W tn)" : "from one grid (no transposed measurements)",
             p.elementwise_bandwidth_gb_per_s(),
             p.elementwise_gb_per_s > 0 ? "an element-wise kernel's, measured" : "the copy bandwidth",
             p.host_overhead_us > 0
                 ? fmt::format(
                       "host overhead {:.2f} us per op, added to each op's time (not in the columns below)",
                       p.host_overhead_us)
                 : std::string("no host overhead measured")) +
         (p.fit.fitted() ? fmt::format("\nfitted terms (applied): GEMM rates x {:.3g}, the layers' "
                                       "element-wise time / {:.3g}, "
                                       "flash attention at {:.3g} of the best GEMM rate; {}",
                                       p.fit.gemm_efficiency, p.fit.elementwise_efficiency,
                                       flash_attention_efficiency(p), p.fit.source)
                         : std::string());
}

std::string describe_source(const ResolvedStageCosts& resolved) {
  const Scenario& s = resolved.scenario;
  const std::string batch = s.global_batch > 0 ? fmt::format("global batch {}, ", s.global_batch) : "";
  const UnevenSplit split = uneven_split(s);
  const std::string sizes =
      split.larger_count > 0
          ? fmt::format("{} of {} and {} of {} samples (the table: the {}-sample ones)", split.larger_count,
                        split.smaller + 1, s.microbatches - split.larger_count, split.smaller,
                        split.smaller + 1)
          : fmt::format("{:.4g} sample(s)", s.samples_per_microbatch());
  const std::string shape =
      fmt::format("{}{} microbatches of {}{}", batch, s.microbatches, sizes,
                  resolved.entry.empty() ? " (the scenario's pipeline:)" : " (entry " + resolved.entry + ")");
  if (!s.transformer) return "explicit costs from the scenario; " + shape;
  const TransformerSetup& t = *s.transformer;
  return fmt::format(
      "transformer: {} layers, hidden {}, {} heads, seq {}, vocab {}, {}; {}; {} layer split; optimizer "
      "{}\nhardware profile {} ({})\n{}",
      t.model.layers, t.model.hidden, t.model.heads, t.model.seq_len, t.model.vocab, t.model.dtype, shape,
      layer_split_text(t), optimizer_name(t.optimizer.type), t.profile.source, t.profile.device_name,
      profile_terms(t.profile));
}

// The slowest stage's compute per microbatch against the mean: 1 for perfectly balanced stages.
std::string imbalance_line(const std::vector<StageRow>& rows) {
  double largest = 0, total = 0;
  size_t slowest = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const double work = rows[i].forward_ms + rows[i].backward_input_ms + rows[i].backward_weight_ms;
    total += work;
    if (work > largest) {
      largest = work;
      slowest = i;
    }
  }
  return fmt::format("F+I+W per microbatch: slowest stage {} at {:.3f} ms, mean {:.3f} ms, max/mean {:.3f}\n",
                     slowest + 1, largest, total / rows.size(), largest / (total / rows.size()));
}

// The smaller microbatches' op times where the batch splits unevenly (their memory is at most the table's).
std::string smaller_microbatches_text(const ResolvedStageCosts& resolved) {
  if (resolved.smaller_rows.empty()) return "";
  std::vector<std::vector<std::string>> table;
  for (size_t i = 0; i < resolved.smaller_rows.size(); ++i) {
    const StageRow& r = resolved.smaller_rows[i];
    table.push_back({fmt::format("{}", i + 1), fmt::format("{:.3f}", r.forward_ms),
                     fmt::format("{:.3f}", r.backward_input_ms),
                     fmt::format("{:.3f}", r.backward_weight_ms)});
  }
  return fmt::format("\nthe microbatches of {} samples:\n", uneven_split(resolved.scenario).smaller) +
         render_table({"stage", "F (ms)", "I (ms)", "W (ms)"}, table);
}

std::string render(const ResolvedStageCosts& resolved) {
  const std::vector<StageRow>& rows = resolved.rows;
  auto bytes = [](double b) { return b < 0 ? std::string("-") : format_bytes(static_cast<Bytes>(b)); };
  std::vector<std::vector<std::string>> table;
  for (size_t i = 0; i < rows.size(); ++i) {
    const StageRow& r = rows[i];
    const std::string layers = !r.units.empty() ? r.units : r.layers < 0 ? "-" : fmt::format("{}", r.layers);
    table.push_back({fmt::format("{}", i + 1), layers, fmt::format("{:.3f}", r.forward_ms),
                     fmt::format("{:.3f}", r.backward_input_ms), fmt::format("{:.3f}", r.backward_weight_ms),
                     fmt::format("{:.3f}", r.comm_ms), fmt::format("{:.3f}", r.optimizer_ms),
                     bytes(r.parameter_bytes), bytes(r.gradient_bytes), bytes(r.optimizer_bytes),
                     bytes(r.activation_bytes), bytes(r.weight_grad_activation_bytes)});
  }
  return fmt::format("scenario {}: {}\n\n", resolved.scenario.name, describe_source(resolved)) +
         render_table({"stage", "layers", "F (ms)", "I (ms)", "W (ms)", "comm (ms)", "U (ms)", "weights",
                       "grads", "optimizer", "M_B", "M_W"},
                      table) +
         "\n" + imbalance_line(rows) + smaller_microbatches_text(resolved);
}

std::string to_json(const std::vector<StageRow>& rows) {
  nlohmann::ordered_json doc;
  doc["stages"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const StageRow& r = rows[i];
    nlohmann::ordered_json j;
    j["stage"] = i + 1;
    j["layers"] = r.layers < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(r.layers);
    if (!r.units.empty()) j["units"] = r.units;
    j["forward_ms"] = r.forward_ms;
    j["backward_input_ms"] = r.backward_input_ms;
    j["backward_weight_ms"] = r.backward_weight_ms;
    j["comm_ms"] = r.comm_ms;
    j["optimizer_step_ms"] = r.optimizer_ms;
    auto optional_bytes = [](double b) {
      return b < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(b);
    };
    j["parameter_bytes"] = optional_bytes(r.parameter_bytes);
    j["activation_bytes_per_microbatch"] = r.activation_bytes;
    j["gradient_bytes"] = optional_bytes(r.gradient_bytes);
    j["optimizer_state_bytes"] = optional_bytes(r.optimizer_bytes);
    j["weight_grad_activation_bytes_per_microbatch"] = r.weight_grad_activation_bytes;
    doc["stages"].push_back(std::move(j));
  }
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";  // a path may not be UTF-8
}

void run(const CostsArgs& args, const Limits& limits) {
  if (!args.layer_times_path.empty()) {
    if (!args.profile_given) {
      throw InputError(
          "--layer-times needs --profile: the profile of the device the layer times were measured on, e.g. "
          "--profile share/profiles/nvidia-h200.yaml");
    }
    const HardwareProfile profile = load_hardware_profile(resolve_profile_path(args.profile));
    const LayerTimesFile measured = load_layer_times(args.layer_times_path);
    std::cout << render_layer_times_report(measured, compare_layer_times(profile, measured.rows),
                                           profile.source);
    return;
  }
  if (args.fit_report) {
    const HardwareProfile profile = load_hardware_profile(resolve_profile_path(args.profile));
    std::cout << render_fit_report(a100_fit_rows(profile, args.data_dir), profile.source);
    return;
  }
  Scenario scenario =
      load_scenario(args.scenario.empty() ? default_scenario_path() : args.scenario, args.overrides);
  scenario.allow_unmodelled = args.allow_unmodelled;
  const ResolvedStageCosts resolved = resolve_stage_costs(scenario, args.entry, limits);
  std::cout << unmodelled_banner(unmodelled_lines(unmodelled_features(scenario))) << render(resolved);
  if (!args.json_path.empty()) write_file(args.json_path, to_json(resolved.rows));
}

}  // namespace

void add_costs_command(CLI::App& app, const Limits& limits) {
  auto args = std::make_shared<CostsArgs>();
  CLI::App* cmd =
      app.add_subcommand("costs", "show the per-stage times and bytes a scenario's cost model derives");
  cmd->add_option("scenario", args->scenario, "scenario YAML file (default: scenarios/default.yaml)");
  cmd->add_option("--json", args->json_path, "write the per-stage costs as JSON to this file");
  add_allow_unmodelled_flag(cmd, args->allow_unmodelled);
  cmd->add_option("--set", args->overrides, "override a scenario key, e.g. --set pipeline.microbatch_size=2")
      ->allow_extra_args(false);
  cmd->add_option(
      "--entry", args->entry,
      "show the costs of the scenario's K-th schedule entry (1-based): its pipeline: overrides and "
      "its layout, as the run uses them (default: the scenario's own pipeline:)");
  cmd->add_flag(
      "--fit-report", args->fit_report,
      "compare the transformer model on a profile with the Zero Bubble paper's profiled A100 times");
  cmd->add_option(
      "--layer-times", args->layer_times_path,
      "compare the transformer model on --profile with one layer's F, I, W and B measured on that "
      "device (the CSV calibrate/gpu/torch_layer_times.py writes)");
  cmd->add_option(
         "--profile", args->profile,
         "hardware profile for --fit-report (default a100-sxm4-80gb) or --layer-times (name or path)")
      ->each([args](const std::string&) { args->profile_given = true; });
  cmd->add_option(
      "--data", args->data_dir,
      "directory of the zb_*.csv reference data (default: share/data/zero_bubble in the source tree)");
  cmd->callback([args, &limits] { run(*args, limits); });
}

}  // namespace pipesim
