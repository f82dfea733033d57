#pragma once
// A device's work before a step's barrier (CostModel::before_barrier_ns), the one rule the engine and the
// fast timers share: its stages' parts of the step, back to back.
#include <optional>

#include "sim/cost_model.h"
#include "sim/layout.h"

namespace pipesim {

// The sum over the stages device `device` holds of their synchronized step `step`'s part before the barrier;
// nullopt when a part lies outside 0..its step's duration (a cost model's bug: the engine names it).
std::optional<TimeNs> before_barrier_total(const CostModel& costs, const PipelineLayout& layout, int device,
                                           int step);

}  // namespace pipesim
