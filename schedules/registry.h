#pragma once
// Schedules by name. Adding a schedule = one new file defining its factory + one line in registry.cpp.
#include <memory>
#include <string>
#include <vector>

#include "schedules/schedule.h"
#include "schedules/schedule_params.h"

namespace pipesim {

using ScheduleFactory = std::unique_ptr<Schedule> (*)(const ScheduleParams& params);

struct ScheduleInfo {
  std::string name;
  std::string description;  // one line, for `pipesim schedules`
  ScheduleFactory make;
};

const std::vector<ScheduleInfo>& registered_schedules();

// Throws InputError for an unknown name (listing the known ones) or a bad parameter.
std::unique_ptr<Schedule> make_schedule(const std::string& name, const ScheduleParams& params);

}  // namespace pipesim
