#include "executor/model.h"

#include <fmt/format.h>

#include <numeric>

#include "sim/errors.h"

namespace pipesim::executor {

std::vector<int> balanced_unit_split(const std::vector<std::size_t>& unit_parameters, int stages) {
  const int units = static_cast<int>(unit_parameters.size());
  if (stages < 1 || units < stages) {
    throw InputError(fmt::format("the model has {} layer units, too few for {} stages (at least one each)",
                                 units, stages));
  }
  // Each boundary goes where the prefix sum first reaches its share of the total, while leaving at least
  // one unit for every later stage.
  const double total =
      static_cast<double>(std::accumulate(unit_parameters.begin(), unit_parameters.end(), std::size_t{0}));
  std::vector<int> starts{0};
  double prefix = 0;
  int u = 0;
  for (int s = 1; s < stages; ++s) {
    const double target = total * s / stages;
    prefix += static_cast<double>(unit_parameters[u]);
    ++u;
    while (u < units - (stages - s) && prefix + unit_parameters[u] / 2.0 <= target) {
      prefix += static_cast<double>(unit_parameters[u]);
      ++u;
    }
    starts.push_back(u);
  }
  starts.push_back(units);
  return starts;
}

}  // namespace pipesim::executor
