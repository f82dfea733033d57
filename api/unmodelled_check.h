#pragma once
// A scenario whose model has features the cost equations do not represent yet (cost_models/
// unmodelled_features.h) is refused by every command that prices it, naming the key, its line and what the
// dense stand-in would miss; with --allow-unmodelled (Scenario::allow_unmodelled) it runs, and every header
// and JSON document carries the list.
#include <string>
#include <vector>

#include "io/scenario.h"

namespace pipesim {

// The scenario's features in force that no figure accounts for; empty for explicit costs.
std::vector<UnmodelledFeature> unmodelled_features(const Scenario& scenario);

// Throws InputError for the first unmodelled feature unless the scenario allows them.
void require_modelled(const Scenario& scenario);

}  // namespace pipesim
