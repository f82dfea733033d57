#include "schedules/parameter_names.h"

#include "schedules/registry.h"

namespace pipesim {

std::set<std::string> schedule_parameter_names(const std::string& schedule) {
  for (const ScheduleInfo& info : registered_schedules()) {
    if (info.name == schedule) {
      const ScheduleParams none;
      info.make(none);
      return none.asked();
    }
  }
  return {};  // csv:PATH takes none
}

}  // namespace pipesim
