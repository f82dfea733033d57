#pragma once
// The per-stage costs `pipesim costs` shows, resolved by the run's own resolve() (api/resolve.h): the entry's
// pipeline: overrides (global batch, microbatches, microbatch size), the schedule's layout, the layer split.
#include <string>
#include <vector>

#include "io/scenario.h"
#include "sim/layout.h"
#include "sim/limits.h"

namespace pipesim {

// One (virtual) stage; byte figures and layers are absent (negative) for explicit costs.
struct StageRow {
  int layers = -1;
  std::string units;  // balanced split: the units held
  double forward_ms = 0, backward_input_ms = 0, backward_weight_ms = 0, comm_ms = 0, optimizer_ms = 0;
  double parameter_bytes = -1, gradient_bytes = -1, optimizer_bytes = -1;
  double activation_bytes = 0, weight_grad_activation_bytes = 0;
};

struct ResolvedStageCosts {
  Scenario scenario;  // with the entry's pipeline: overrides applied
  std::string entry;  // "" for the scenario's own pipeline, else the schedule entry's name and parameters
  int devices = 0;
  std::vector<StageRow> rows;
  // Where m does not divide the global batch: `rows` are the larger microbatches' (⌈B/m⌉ samples, the first
  // B mod m of each batch) and these the smaller ones'; empty otherwise.
  std::vector<StageRow> smaller_rows;
};

// entry 0: the scenario's own pipeline, one stage per device; entry k >= 1: the scenario's k-th schedule
// entry (its pipeline: overrides and its schedule's layout). Throws InputError for an entry beyond the list.
ResolvedStageCosts resolve_stage_costs(const Scenario& scenario, int entry, const Limits& limits);

}  // namespace pipesim
