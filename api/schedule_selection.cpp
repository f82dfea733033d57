#include "api/schedule_selection.h"

#include <fmt/format.h>

#include <sstream>

#include "api/simulation.h"
#include "sim/errors.h"

namespace pipesim {

std::vector<ScheduleRequest> select_schedules(const Scenario& scenario, const std::string& list) {
  if (list.empty()) return requested_schedules(scenario);
  std::vector<ScheduleRequest> selected;
  std::stringstream stream(list);
  for (std::string item; std::getline(stream, item, ',');) {
    if (item.empty()) throw InputError(fmt::format("--schedules '{}': empty schedule name", list));
    std::stringstream parts(item);
    std::string name;
    std::getline(parts, name, ':');
    if (name == "csv") {
      std::string path;
      std::getline(parts, path, ':');
      if (path.empty()) throw InputError(fmt::format("--schedules {}: expected csv:PATH", item));
      name += ":" + path;
    }
    ScheduleRequest request{name, ScheduleParams(fmt::format("--schedules {}", item))};
    bool has_params = false;
    for (std::string kv; std::getline(parts, kv, ':');) {
      const auto eq = kv.find('=');
      if (eq == std::string::npos) {
        throw InputError(fmt::format("--schedules {}: expected name:key=value, got '{}'", item, kv));
      }
      request.params.set(kv.substr(0, eq), kv.substr(eq + 1));
      has_params = true;
    }
    if (!has_params) {
      for (const ScheduleRequest& listed : scenario.schedules) {
        if (listed.name == name) {
          request = listed;
          break;
        }
      }
    }
    selected.push_back(std::move(request));
  }
  return selected;
}

}  // namespace pipesim
