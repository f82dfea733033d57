#pragma once
// `pipesim export`: a static schedule's lists for one batch, in PyTorch's CSV format
// (schedules/pytorch_csv.h).
#include <string>

#include "io/scenario.h"

namespace pipesim {

// Throws InputError when the schedule is a run-time rule (nothing static to write) or cannot run the
// scenario.
std::string export_schedule_csv(const Scenario& scenario, const ScheduleRequest& request);

}  // namespace pipesim
