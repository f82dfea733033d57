#pragma once
// The balanced split's stages: contiguous groups of the model's units (units.h), by a min-max partition of
// F + I + W per microbatch under the device's memory (cost_models/balanced_split.h), or at pinned starts.
#include <vector>

#include "cost_models/transformer/stage_costs.h"
#include "cost_models/transformer/units.h"
#include "sim/limits.h"
#include "spec/transformer_model.h"

namespace pipesim::transformer {

// Each stage's first unit, for one rank's share b.
std::vector<int> balanced_starts(const TransformerSetup& setup, const std::vector<UnitCosts>& units, double b,
                                 int stages, const Limits& limits);
// The stages' costs at the setup's pinned starts, or at balanced_starts; unscaled.
std::vector<StageCosts> balanced_stage_costs(const TransformerSetup& setup, double b, int stages,
                                             const Limits& limits);

}  // namespace pipesim::transformer
