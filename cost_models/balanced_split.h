#pragma once
// The min-max contiguous partition behind `layer_split: balanced` (README.md, "Transformer scenarios"): split
// a sequence of model units into pipeline stages so that the slowest stage is as fast as possible, while
// every stage's memory fits the device.
#include <vector>

#include "sim/limits.h"

namespace pipesim {

struct PartitionItem {
  double time_s = 0;            // compute time per microbatch (the objective)
  double static_bytes = 0;      // held whatever runs: weights, gradients, optimizer state
  double activation_bytes = 0;  // stored per microbatch in flight
};

// What one stage would need: static + in_flight × activation bytes, with in_flight = parts − g for stage g
// (0-based): 1F1B's (and PACI's) peak of N − i + 1 microbatches on stage i (1-based, docs/design.md §4).
double stage_memory_bytes(const PartitionItem& sum, int stage, int parts);

// Splits `items` into `parts` non-empty contiguous groups minimising the largest group's summed time, subject
// to stage_memory_bytes <= capacity_bytes on every group (no bound when capacity_bytes <= 0). Exact: dynamic
// programming over prefixes, O(parts · items²). Returns the first item of each group (the first is 0); among
// optimal splits, the one with the earliest boundaries. Throws InputError when there are fewer items than
// parts, or when no split fits (saying what the leanest split needs).
// The search is bounded by `limits` (check_partition_work).
std::vector<int> min_max_partition(const std::vector<PartitionItem>& items, int parts, double capacity_bytes,
                                   const Limits& limits);

// One step of the partition's search (a few ns) against one simulated op (100-200 ns): the ops ceiling
// (--max-ops, 10-20 s of simulation) admits this many steps per op.
inline constexpr double kPartitionStepsPerOp = 50;
// Throws ResourceLimitError, before anything is allocated, when the exact search over `items` units and
// `parts` stages would take more steps than limits.ops admits or more memory than limits.memory_bytes.
void check_partition_work(int items, int parts, const Limits& limits);

}  // namespace pipesim
