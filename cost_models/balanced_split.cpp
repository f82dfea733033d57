#include "cost_models/balanced_split.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <limits>

#include "base/errors.h"

namespace pipesim {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Sum of items [first, last) from prefix sums.
struct Prefix {
  std::vector<PartitionItem> sums;  // sums[j] = items [0, j)
  explicit Prefix(const std::vector<PartitionItem>& items) : sums(items.size() + 1) {
    for (size_t j = 0; j < items.size(); ++j) {
      sums[j + 1] = {sums[j].time_s + items[j].time_s, sums[j].static_bytes + items[j].static_bytes,
                     sums[j].activation_bytes + items[j].activation_bytes};
    }
  }
  PartitionItem of(int first, int last) const {
    return {sums[last].time_s - sums[first].time_s, sums[last].static_bytes - sums[first].static_bytes,
            sums[last].activation_bytes - sums[first].activation_bytes};
  }
};

// Minimises the largest cost(stage, first, last) over contiguous splits into `parts` non-empty groups, where
// a cost of +infinity forbids a group. Returns the group starts, or nothing when every split is forbidden.
std::vector<int> min_max_split(int items, int parts, const std::function<double(int, int, int)>& cost) {
  // best[g][j]: the smallest largest cost of splitting items [0, j) into g + 1 groups; from[g][j]: the start
  // of the last of those groups.
  std::vector<std::vector<double>> best(parts, std::vector<double>(items + 1, kInfinity));
  std::vector<std::vector<int>> from(parts, std::vector<int>(items + 1, -1));
  for (int j = 1; j <= items; ++j) best[0][j] = cost(0, 0, j);
  for (int g = 1; g < parts; ++g) {
    for (int j = g + 1; j <= items; ++j) {
      for (int i = g; i < j; ++i) {
        if (best[g - 1][i] == kInfinity) continue;
        const double value = std::max(best[g - 1][i], cost(g, i, j));
        if (value < best[g][j]) {
          best[g][j] = value;
          from[g][j] = i;
        }
      }
    }
  }
  if (best[parts - 1][items] == kInfinity) return {};
  std::vector<int> starts(parts, 0);
  for (int g = parts - 1, j = items; g > 0; --g) {
    starts[g] = from[g][j];
    j = starts[g];
  }
  return starts;
}

}  // namespace

double stage_memory_bytes(const PartitionItem& sum, int stage, int parts) {
  return sum.static_bytes + (parts - stage) * sum.activation_bytes;
}

void check_partition_work(int items, int parts, const Limits& limits) {
  // The dynamic programme visits (stage, end, start) once each, and keeps a cost and a start per (stage,
  // end): bounded as a run is (sim/resource_estimate.h), before any of it is allocated.
  const double steps = static_cast<double>(parts) * items * items / 2;
  const double bytes = static_cast<double>(parts) * (items + 1.0) * (sizeof(double) + sizeof(int));
  if (steps > limits.ops * kPartitionStepsPerOp) {
    throw ResourceLimitError(fmt::format(
        "balanced split: {} units over {} stages take about {:.3g} steps of the exact split's search "
        "(stages x units^2 / 2), above the {:.3g} the ceiling allows (--max-ops {:.3g} simulated ops, a "
        "step weighing 1/{:g} of one); give pipeline.layer_split as a list or 'even', or raise --max-ops",
        items, parts, steps, limits.ops * kPartitionStepsPerOp, limits.ops, kPartitionStepsPerOp));
  }
  if (bytes > limits.memory_bytes) {
    throw ResourceLimitError(fmt::format(
        "balanced split: {} units over {} stages need about {:.3g} GB for the exact split's tables, above "
        "the "
        "{:.3g} GB ceiling; give pipeline.layer_split as a list or 'even', or raise --max-memory-gb",
        items, parts, bytes / 1e9, limits.memory_bytes / 1e9));
  }
}

std::vector<int> min_max_partition(const std::vector<PartitionItem>& items, int parts, double capacity_bytes,
                                   const Limits& limits) {
  const int n = static_cast<int>(items.size());
  if (parts < 1 || n < parts) {
    throw InputError(fmt::format(
        "balanced split: {} units cannot fill {} stages (each stage needs at least one)", n, parts));
  }
  check_partition_work(n, parts, limits);
  const Prefix prefix(items);
  auto memory = [&](int stage, int first, int last) {
    return stage_memory_bytes(prefix.of(first, last), stage, parts);
  };
  std::vector<int> starts = min_max_split(n, parts, [&](int stage, int first, int last) {
    if (capacity_bytes > 0 && memory(stage, first, last) > capacity_bytes) return kInfinity;
    return prefix.of(first, last).time_s;
  });
  if (!starts.empty()) return starts;
  // Nothing fits: say how much the split that needs the least memory on its fullest stage needs.
  const std::vector<int> leanest = min_max_split(n, parts, memory);
  double need = 0;
  for (int g = 0; g < parts; ++g) {
    need = std::max(need, memory(g, leanest[g], g + 1 < parts ? leanest[g + 1] : n));
  }
  throw InputError(fmt::format(
      "balanced split: no split of {} units over {} stages fits {:.2f} GiB per device (weights, "
      "gradients, optimizer state and 1F1B's in-flight activations); the leanest needs {:.2f} GiB",
      n, parts, capacity_bytes / kGiB, need / kGiB));
}

}  // namespace pipesim
