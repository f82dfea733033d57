#pragma once
// Checks of a user's cost table that no single value's range check can make.
#include "cost_models/explicit_costs.h"

namespace pipesim {

// Whether some stage's F, I or W lasts longer than 0 ns: with none, a batch takes no time and throughput has
// no value (an input error; README "Limits and robustness").
bool some_op_takes_time(const ExplicitCostTable& table);

}  // namespace pipesim
