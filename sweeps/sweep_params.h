#pragma once
// `pipesim sweep --param`: "key=LIST" applies to every swept schedule that takes the parameter,
// "schedule:key=LIST" to that schedule only; a parameter no swept schedule takes is an error.
#include <string>
#include <utility>
#include <vector>

#include "io/scenario.h"

namespace pipesim {

struct SweepParamKey {
  std::string schedule;  // empty: every schedule that takes `key`
  std::string key;
};
// "zb-1p:memory_limit" or "memory_limit".
SweepParamKey parse_sweep_param_key(const std::string& text);

bool sweep_param_applies(const SweepParamKey& param, const std::string& schedule);

// Throws InputError naming the parameter, the swept schedules and the parameters they take.
void check_sweep_params_apply(const std::vector<std::pair<std::string, std::vector<std::string>>>& params,
                              const std::vector<ScheduleRequest>& schedules);

}  // namespace pipesim
