#include "cost_models/cost_table_checks.h"

#include <algorithm>

namespace pipesim {

bool some_op_takes_time(const ExplicitCostTable& table) {
  auto positive = [](const std::vector<TimeNs>& times) {
    return std::any_of(times.begin(), times.end(), [](TimeNs t) { return t > 0; });
  };
  return positive(table.forward_ns) || positive(table.backward_input_ns) ||
         positive(table.backward_weight_ns);
}

}  // namespace pipesim
