#pragma once
// Physics a simulated run must obey before any of its figures is printed (docs/design.md §5): a figure that
// breaks one is a bug in pipesim, raised as InternalError naming the run, never a number in a report.
#include <string>

#include "api/simulation.h"

namespace pipesim {

// "paci(accumulation=1) N=8 m=1 (4 batches requested)".
std::string run_name(const SimulationResult& result);

// Throws InternalError unless: the period is at least m·max_i work_i (with deterministic costs also for the
// whole run's mean work, within one ns per op for integer rounding), no device is busy longer than the
// window, 0 <= bubble < 1 (bubble 0 when nothing takes time), the throughput is within its bound
// b / max_i work_i, and every stage's peak in flight and live weight versions are within the schedule's
// bound. `exact_costs`: the costs repeat exactly (no noise).
void assert_physical(const SimulationResult& result, bool exact_costs);

}  // namespace pipesim
