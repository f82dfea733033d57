#include "executor/model.h"

#include <fmt/format.h>

#include "base/errors.h"
#include "cost_models/balanced_split.h"

namespace pipesim::executor {

std::vector<int> balanced_unit_split(const std::vector<double>& unit_costs, int stages) {
  const int units = static_cast<int>(unit_costs.size());
  if (stages < 1 || units < stages) {
    throw InputError(fmt::format("the model has {} layer units, too few for {} stages (at least one each)",
                                 units, stages));
  }
  std::vector<PartitionItem> items;
  for (const double cost : unit_costs) items.push_back({.time_s = cost});
  std::vector<int> starts =
      min_max_partition(items, stages, 0.0, Limits{});  // a trained model's few units: far below any ceiling
  starts.push_back(units);
  return starts;
}

int blocks_for_stages(const ModelShape& shape, int stages) {
  ModelShape grown = shape;
  while (grown.unit_count() < stages) ++grown.blocks;
  return grown.blocks;
}

}  // namespace pipesim::executor
