#pragma once
// The Zero Bubble paper's models as transformer scenarios (a run's memory model figures are its result's
// `memory`).
#include <string>

#include "analysis/memory_model.h"
#include "api/simulation.h"
#include "io/zb_reference.h"

namespace pipesim {

// One of zb_models.csv on a profile: zb layer split, AdamW, the profile's link; no schedules listed.
Scenario zb_model_scenario(const ZbModel& model, int microbatches, const std::string& profile, int batches);

}  // namespace pipesim
