#include "api/stage_costs.h"

#include <fmt/format.h>

#include "api/resolve.h"
#include "api/simulation.h"
#include "api/unmodelled_check.h"
#include "base/errors.h"
#include "cost_models/transformer/cost_model.h"
#include "cost_models/transformer/stage_costs.h"
#include "cost_models/uneven_microbatch_costs.h"

namespace pipesim {
namespace {

std::vector<StageRow> rows_of(const Scenario& scenario, const PipelineLayout& layout,
                              const CostModel* costs) {
  std::vector<StageRow> rows;
  if (const auto* uneven = dynamic_cast<const UnevenMicrobatchCostModel*>(costs)) {
    return rows_of(scenario, layout, &uneven->larger());
  }
  if (const auto* transformer = dynamic_cast<const TransformerCostModel*>(costs)) {
    for (const StageCosts& c : transformer->stages()) {
      rows.push_back({c.layers, c.units, c.forward_s * 1e3, c.backward_input_s * 1e3,
                      c.backward_weight_s * 1e3, c.transfer_s * 1e3, c.optimizer_s * 1e3, c.parameter_bytes,
                      c.gradient_bytes, c.optimizer_bytes, c.activation_bytes,
                      c.weight_grad_activation_bytes});
    }
    return rows;
  }
  for (int stage = 0; stage < layout.stages; ++stage) {
    StageRow row;
    row.forward_ms = ns_to_ms(costs->duration(forward(stage, 0)));
    row.backward_input_ms = ns_to_ms(costs->duration(backward_input(stage, 0)));
    row.backward_weight_ms = ns_to_ms(costs->duration(backward_weight(stage, 0)));
    row.optimizer_ms = ns_to_ms(costs->duration(optimizer_step(stage, 0, false)));
    const auto& latency = scenario.comm.latency_ns;
    const size_t device = layout.device(stage);
    row.comm_ms = latency.empty() ? 0 : ns_to_ms(latency[std::min<size_t>(device, latency.size() - 1)]);
    row.activation_bytes = static_cast<double>(costs->activation_bytes(stage));
    row.weight_grad_activation_bytes = static_cast<double>(costs->weight_grad_activation_bytes(stage));
    rows.push_back(row);
  }
  return rows;
}

// The smaller microbatches' rows where the batch splits unevenly.
std::vector<StageRow> smaller_rows_of(const Scenario& scenario, const PipelineLayout& layout,
                                      const CostModel* costs) {
  const auto* uneven = dynamic_cast<const UnevenMicrobatchCostModel*>(costs);
  return uneven ? rows_of(scenario, layout, &uneven->smaller()) : std::vector<StageRow>{};
}

}  // namespace

ResolvedStageCosts resolve_stage_costs(const Scenario& scenario, int entry, const Limits& limits) {
  require_modelled(scenario);
  ResolvedStageCosts result;
  if (entry == 0) {
    result.scenario = scenario;
    result.devices = scenario.stages;
    const PipelineLayout layout = PipelineLayout::linear(scenario.stages);
    const std::unique_ptr<CostModel> costs = make_cost_model(scenario, layout, limits);
    result.rows = rows_of(scenario, layout, costs.get());
    result.smaller_rows = smaller_rows_of(scenario, layout, costs.get());
    return result;
  }
  const std::vector<ScheduleRequest> requests = requested_schedules(scenario);
  if (entry < 0 || entry > static_cast<int>(requests.size())) {
    throw InputError(fmt::format("--entry {}: the scenario {} has schedule entries 1 to {}", entry,
                                 scenario.source, requests.size()));
  }
  // Exactly what simulate_schedule runs, without the checks a run needs (nothing is run here).
  ResolveOptions no_checks;
  no_checks.check = false;
  no_checks.limits = limits;
  const ResolvedRun run = resolve(scenario, requests[entry - 1], no_checks);
  result.scenario = run.scenario;
  result.entry = run.label;
  result.devices = run.layout.devices;
  result.rows = rows_of(run.scenario, run.layout, run.costs.get());
  result.smaller_rows = smaller_rows_of(run.scenario, run.layout, run.costs.get());
  return result;
}

}  // namespace pipesim
