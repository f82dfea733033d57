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

// PyTorch's schedule class names (torch.distributed.pipelining's get_schedule_class, case-insensitive, with
// or without the "Schedule" prefix) that name a registered schedule.
struct ScheduleAlias {
  std::string pytorch_name;
  std::string name;  // the registered schedule
};
const std::vector<ScheduleAlias>& pytorch_schedule_aliases();

// The registered name for `name`: itself, or the schedule a PyTorch class name stands for (every class
// PyTorch's get_schedule_class maps has one).
std::string canonical_schedule_name(const std::string& name);

// Throws InputError for an unknown name (listing the known ones) or a bad parameter.
std::unique_ptr<Schedule> make_schedule(const std::string& name, const ScheduleParams& params);

}  // namespace pipesim
