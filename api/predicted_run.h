#pragma once
// A simulated run of a transformer scenario with the memory model's figures (weights × live versions,
// gradients, optimizer state, activations in flight), and the Zero Bubble paper's models as transformer
// scenarios.
#include <string>

#include "analysis/memory_model.h"
#include "api/simulation.h"
#include "io/zb_reference.h"

namespace pipesim {

struct PredictedRun {
  SimulationResult result;
  MemoryReport memory;  // empty for explicit-cost scenarios (no parameter counts)
};

PredictedRun run_with_memory(const Scenario& scenario, const ScheduleRequest& request);

// One of zb_models.csv on a profile: zb layer split, AdamW, the profile's link; no schedules listed.
Scenario zb_model_scenario(const ZbModel& model, int microbatches, const std::string& profile, int batches);

}  // namespace pipesim
