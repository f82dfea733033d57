#include "schedules/parameter_names.h"

#include "base/errors.h"
#include "schedules/registry.h"

namespace pipesim {

std::set<std::string> schedule_parameter_names(const std::string& schedule) {
  std::string name = schedule;
  try {
    name = canonical_schedule_name(schedule);
  } catch (const InputError&) {
    return {};  // making the schedule says why
  }
  for (const ScheduleInfo& info : registered_schedules()) {
    if (info.name == name) {
      const ScheduleParams none;
      info.make(none);
      return none.asked();
    }
  }
  return {};  // csv:PATH takes none
}

}  // namespace pipesim
