// pipesim costs [SCENARIO] [--json F] [--set key=value] | pipesim costs --fit-report [--profile P] [--data
// DIR] Shows what the cost model derived per stage, so a user can see where a prediction comes from.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/format.h"
#include "cli/simulation.h"
#include "cli/zb_reference.h"

namespace pipesim {
namespace {

struct CostsArgs {
  std::string scenario;
  std::string json_path;
  std::vector<std::string> overrides;
  bool fit_report = false;
  std::string profile = "a100-sxm4-80gb";
  std::string data_dir = default_reference_data_dir();
};

// One stage as the command shows it; byte figures are absent (negative) for explicit costs.
struct StageRow {
  int layers = -1;
  double forward_ms = 0, backward_input_ms = 0, backward_weight_ms = 0, comm_ms = 0, optimizer_ms = 0;
  double parameter_bytes = -1, gradient_bytes = -1, optimizer_bytes = -1;
  double activation_bytes = 0, weight_grad_activation_bytes = 0;
};

std::vector<StageRow> stage_rows(const Scenario& scenario) {
  std::vector<StageRow> rows;
  if (scenario.transformer) {
    for (const StageCosts& c :
         transformer_stage_costs(*scenario.transformer, scenario.microbatch_size, scenario.stages)) {
      rows.push_back({c.layers, c.forward_s * 1e3, c.backward_input_s * 1e3, c.backward_weight_s * 1e3,
                      c.transfer_s * 1e3, c.optimizer_s * 1e3, c.parameter_bytes, c.gradient_bytes,
                      c.optimizer_bytes, c.activation_bytes, c.weight_grad_activation_bytes});
    }
    return rows;
  }
  const PipelineLayout layout = PipelineLayout::linear(scenario.stages);
  const std::unique_ptr<CostModel> costs = make_cost_model(scenario, layout);
  for (int stage = 0; stage < scenario.stages; ++stage) {
    StageRow row;
    row.forward_ms = ns_to_ms(costs->duration(forward(stage, 0)));
    row.backward_input_ms = ns_to_ms(costs->duration(backward_input(stage, 0)));
    row.backward_weight_ms = ns_to_ms(costs->duration(backward_weight(stage, 0)));
    row.optimizer_ms = ns_to_ms(costs->duration(optimizer_step(stage, 0, false)));
    const auto& latency = scenario.comm.latency_ns;
    row.comm_ms = latency.empty() ? 0 : ns_to_ms(latency[std::min<size_t>(stage, latency.size() - 1)]);
    row.activation_bytes = static_cast<double>(costs->activation_bytes(stage));
    row.weight_grad_activation_bytes = static_cast<double>(costs->weight_grad_activation_bytes(stage));
    rows.push_back(row);
  }
  return rows;
}

std::string describe_source(const Scenario& s) {
  if (!s.transformer) return "explicit costs from the scenario";
  const TransformerSetup& t = *s.transformer;
  return fmt::format(
      "transformer: {} layers, hidden {}, {} heads, seq {}, vocab {}, {}; microbatch {} sample(s); {} layer "
      "split; "
      "optimizer {}\nhardware profile {} ({})",
      t.model.layers, t.model.hidden, t.model.heads, t.model.seq_len, t.model.vocab, t.model.dtype,
      s.microbatch_size, layer_split_name(t.split), optimizer_name(t.optimizer.type), t.profile.source,
      t.profile.device_name);
}

std::string render(const Scenario& scenario, const std::vector<StageRow>& rows) {
  auto bytes = [](double b) { return b < 0 ? std::string("-") : format_bytes(static_cast<Bytes>(b)); };
  std::vector<std::vector<std::string>> table;
  for (size_t i = 0; i < rows.size(); ++i) {
    const StageRow& r = rows[i];
    table.push_back({fmt::format("{}", i + 1), r.layers < 0 ? "-" : fmt::format("{}", r.layers),
                     fmt::format("{:.3f}", r.forward_ms), fmt::format("{:.3f}", r.backward_input_ms),
                     fmt::format("{:.3f}", r.backward_weight_ms), fmt::format("{:.3f}", r.comm_ms),
                     fmt::format("{:.3f}", r.optimizer_ms), bytes(r.parameter_bytes), bytes(r.gradient_bytes),
                     bytes(r.optimizer_bytes), bytes(r.activation_bytes),
                     bytes(r.weight_grad_activation_bytes)});
  }
  return fmt::format("scenario {}: {}\n\n", scenario.name, describe_source(scenario)) +
         render_table({"stage", "layers", "F (ms)", "I (ms)", "W (ms)", "comm (ms)", "U (ms)", "weights",
                       "grads", "optimizer", "M_B", "M_W"},
                      table);
}

std::string to_json(const std::vector<StageRow>& rows) {
  nlohmann::ordered_json doc;
  doc["stages"] = nlohmann::ordered_json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    const StageRow& r = rows[i];
    nlohmann::ordered_json j;
    j["stage"] = i + 1;
    j["layers"] = r.layers < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(r.layers);
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
  return doc.dump(2) + "\n";
}

void run(const CostsArgs& args) {
  if (args.fit_report) {
    const HardwareProfile profile = load_hardware_profile(resolve_profile_path(args.profile));
    std::cout << render_fit_report(a100_fit_rows(profile, args.data_dir), profile.source);
    return;
  }
  const Scenario scenario =
      load_scenario(args.scenario.empty() ? default_scenario_path() : args.scenario, args.overrides);
  const std::vector<StageRow> rows = stage_rows(scenario);
  std::cout << render(scenario, rows);
  if (!args.json_path.empty()) write_file(args.json_path, to_json(rows));
}

}  // namespace

void add_costs_command(CLI::App& app) {
  auto args = std::make_shared<CostsArgs>();
  CLI::App* cmd =
      app.add_subcommand("costs", "show the per-stage times and bytes a scenario's cost model derives");
  cmd->add_option("scenario", args->scenario, "scenario YAML file (default: scenarios/default.yaml)");
  cmd->add_option("--json", args->json_path, "write the per-stage costs as JSON to this file");
  cmd->add_option("--set", args->overrides, "override a scenario key, e.g. --set pipeline.microbatch_size=2")
      ->allow_extra_args(false);
  cmd->add_flag(
      "--fit-report", args->fit_report,
      "compare the transformer model on a profile with the Zero Bubble paper's profiled A100 times");
  cmd->add_option("--profile", args->profile, "hardware profile for --fit-report (name or path)");
  cmd->add_option("--data", args->data_dir,
                  "directory of the zb_*.csv reference data (default: data/zero_bubble in the source tree)");
  cmd->callback([args] { run(*args); });
}

}  // namespace pipesim
