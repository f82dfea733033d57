#include "sweeps/sweep_params.h"

#include <fmt/format.h>

#include "base/errors.h"
#include "schedules/parameter_names.h"

namespace pipesim {

SweepParamKey parse_sweep_param_key(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return {"", text};
  return {text.substr(0, colon), text.substr(colon + 1)};
}

bool sweep_param_applies(const SweepParamKey& param, const std::string& schedule) {
  if (!param.schedule.empty() && param.schedule != schedule) return false;
  return schedule_parameter_names(schedule).count(param.key) != 0;
}

void check_sweep_params_apply(const std::vector<std::pair<std::string, std::vector<std::string>>>& params,
                              const std::vector<ScheduleRequest>& schedules) {
  for (const auto& [text, values] : params) {
    const SweepParamKey param = parse_sweep_param_key(text);
    bool taken = false;
    std::string offered;
    for (const ScheduleRequest& request : schedules) {
      taken = taken || sweep_param_applies(param, request.name);
      std::string names;
      for (const std::string& name : schedule_parameter_names(request.name)) {
        names += (names.empty() ? "" : ", ") + name;
      }
      offered +=
          fmt::format("{}{} ({})", offered.empty() ? "" : "; ", request.name, names.empty() ? "none" : names);
    }
    if (!taken) {
      throw InputError(fmt::format(
          "--param {}: no swept schedule takes '{}'{}; the swept schedules take: {}", text, param.key,
          param.schedule.empty() ? "" : fmt::format(" (only '{}' was asked)", param.schedule), offered));
    }
  }
}

}  // namespace pipesim
