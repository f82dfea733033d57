#pragma once
// `pipesim export`: a static schedule's lists for one batch, in PyTorch's CSV format
// (schedules/pytorch_csv.h), resolved as a run resolves it (api/resolve.h).
#include <string>

#include "io/scenario.h"
#include "sim/limits.h"

namespace pipesim {

// Throws InputError when the schedule is a run-time rule (nothing static to write) or cannot run the
// scenario.
// with_comms: PyTorch's compute_comms format, SEND and RECV actions placed as PyTorch's lowering places them.
// `limits`: the run's ceilings (the generators simulate one batch).
std::string export_schedule_csv(const Scenario& scenario, const ScheduleRequest& request,
                                bool with_comms = false, const Limits& limits = {});
// The scenario's schedule entry `entry` (1-based; every registered schedule when it lists none), planned with
// the scenario's own per-stage costs and comm, e.g. zb-1p/2p for a transformer on a hardware profile.
std::string export_scenario_entry_csv(const Scenario& scenario, int entry, bool with_comms = false,
                                      const Limits& limits = {});

}  // namespace pipesim
