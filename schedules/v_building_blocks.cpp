#include "schedules/v_building_blocks.h"

#include <algorithm>
#include <array>
#include <tuple>
#include <vector>

namespace pipesim {
namespace {

// Op types of one device's slot grid: forwards of chunk 0 and chunk 1, input gradients of chunk 1 and
// chunk 0 (a microbatch runs them in this order on the V), then Ws: one list for every W, or, split, the Ws
// of chunk 1's Is and of chunk 0's Is.
enum Type { kForward0, kForward1, kInput1, kInput0, kWeight, kWeight0 };
constexpr int kBlockTypes = 4;
constexpr int kBlockInterval = 6;  // slots between a block and the next microbatch's

// grid[type][j]: the slot of the j-th op of that type on one device (sorted: microbatch order).
using DeviceGrid = std::vector<std::vector<int>>;
using Grid = std::vector<DeviceGrid>;

std::array<int, kBlockTypes> block_offsets(VMemory variant, int n, int r) {
  if (variant == VMemory::kMin) {
    const int gap = n % 3 == 0 ? 2 : 0;  // keeps the four offsets distinct modulo the interval
    return {r, 2 * n - 1 - r, 2 * n + gap + r, 4 * n + gap - 1 - r};
  }
  const int gap = n % 2 == 0 ? 3 : 0;
  return {2 * r, 3 * n - 2 - r, 3 * n + gap - 1 + 2 * r, 6 * n + gap - 2 - r};
}

int last_slot(const DeviceGrid& grid) {
  int last = 0;
  for (const auto& slots : grid) {
    if (!slots.empty()) last = std::max(last, slots.back());
  }
  return last;
}

// Walks a device's slots in order: calls visit(slot, type) for an op there and empty(slot) for a free one.
// A slot holds at most one op (the lists are sorted and never share a slot).
template <typename Visit, typename Empty>
void walk_slots(const DeviceGrid& grid, int types, Visit visit, Empty empty) {
  std::vector<std::size_t> next(types, 0);
  const int end = last_slot(grid);
  for (int slot = 0; slot <= end; ++slot) {
    int found = -1;
    int earliest = end + 1;
    for (int t = 0; t < types; ++t) {
      if (next[t] < grid[t].size() && grid[t][next[t]] < earliest) {
        earliest = grid[t][next[t]];
        found = t;
      }
    }
    if (found >= 0 && earliest == slot) {
      ++next[found];
      visit(slot, found);
    } else {
      empty(slot);
    }
  }
}

// Puts one W after every I: each free slot takes a pending W (split: chunk 1's before chunk 0's), and what
// is still pending goes after the last op.
DeviceGrid place_weights(DeviceGrid grid, bool split) {
  grid.resize(kBlockTypes);
  grid.resize(split ? kBlockTypes + 2 : kBlockTypes + 1);
  std::array<int, 2> pending{0, 0};
  int slot_after = 0;
  walk_slots(
      grid, kBlockTypes,
      [&](int slot, int type) {
        slot_after = slot;
        if (type == kInput1 || type == kInput0) ++pending[split && type == kInput0 ? 1 : 0];
      },
      [&](int slot) {
        slot_after = slot;
        for (int w = 0; w < 2; ++w) {
          if (pending[w] > 0) {
            grid[kWeight + w].push_back(slot);
            --pending[w];
            break;
          }
        }
      });
  for (int w = 0; w < 2; ++w) {
    for (; pending[w] > 0; --pending[w]) grid[kWeight + w].push_back(++slot_after);
  }
  return grid;
}

// Peak activations of a device in chunks: each F holds one until its W frees it; without W slots, a free
// slot after an I stands for its W.
int activation_peak(const DeviceGrid& grid) {
  const bool has_weights = grid.size() > kBlockTypes;
  const int types = static_cast<int>(grid.size());
  int live = 0;
  int peak = 0;
  int pending = 0;
  walk_slots(
      grid, types,
      [&](int, int type) {
        if (type == kForward0 || type == kForward1) ++live;
        if (type == kInput1 || type == kInput0) ++pending;
        if (type >= kWeight) --live;
        peak = std::max(peak, live);
      },
      [&](int) {
        if (!has_weights && pending > 0) {
          --live;
          --pending;
        }
        peak = std::max(peak, live);
      });
  return peak;
}

// Every op of the grid, earliest slot first (ties: lower device, then type), each given once.
template <typename Visit>
void in_slot_order(const Grid& grid, Visit visit) {
  const int devices = static_cast<int>(grid.size());
  const int types = static_cast<int>(grid[0].size());
  std::vector<std::vector<std::size_t>> next(devices, std::vector<std::size_t>(types, 0));
  for (;;) {
    std::tuple<int, int, int> best{-1, 0, 0};
    int best_slot = 0;
    for (int d = 0; d < devices; ++d) {
      for (int t = 0; t < types; ++t) {
        if (next[d][t] >= grid[d][t].size()) continue;
        const int slot = grid[d][t][next[d][t]];
        if (std::get<0>(best) < 0 || slot < best_slot) {
          best = {d, t, static_cast<int>(next[d][t])};
          best_slot = slot;
        }
      }
    }
    if (std::get<0>(best) < 0) return;
    const auto [d, t, j] = best;
    ++next[d][t];
    visit(d, t, j);
  }
}

// The squeeze with unit ops and no comm: each op starts when its device is free and its inputs are done, in
// the grid's order; the start times become the new grid.
Grid squeeze(const Grid& grid) {
  const int devices = static_cast<int>(grid.size());
  const int types = static_cast<int>(grid[0].size());
  std::vector<std::vector<std::vector<int>>> end(devices, std::vector<std::vector<int>>(types));
  std::vector<int> device_free(devices, 0);
  Grid start = grid;
  in_slot_order(grid, [&](int d, int t, int j) {
    int ready = device_free[d];
    // at(): an input not squeezed yet would be a grid out of dependency order, a bug to report, not to read.
    if ((t == kForward0 || t == kInput1) && d > 0) ready = std::max(ready, end[d - 1][t].at(j));
    if ((t == kForward1 || t == kInput0) && d + 1 < devices) ready = std::max(ready, end[d + 1][t].at(j));
    if (t > 0 && t < kBlockTypes) ready = std::max(ready, end[d][t - 1].at(j));
    if (j > 0) ready = std::max(ready, end[d][t].at(j - 1));
    start[d][t][j] = ready;
    end[d][t].push_back(ready + 1);
    device_free[d] = ready + 1;
  });
  return start;
}

// Pulls ops earlier: in the warm-up (until device 0's first I of chunk 0) when Ws are placed, and in the
// cool-down (after the last microbatch's first forward), each op to the earliest free slot after its
// dependencies that keeps the device's activation peak; the steady phase stays as the blocks put it.
Grid pull_earlier(Grid grid, bool with_weights, int microbatches) {
  const int devices = static_cast<int>(grid.size());
  if (with_weights) {
    for (DeviceGrid& device : grid) device = place_weights(device, false);
  }
  int limit = 0;
  for (const DeviceGrid& device : grid) limit = std::max(limit, activation_peak(device));
  std::vector<std::vector<bool>> occupied(devices);
  for (int d = 0; d < devices; ++d) occupied[d].assign(last_slot(grid[d]) + 1, false);
  int phase = 0;  // 0 warm-up, 1 steady, 2 cool-down
  const Grid original = grid;
  in_slot_order(original, [&](int d, int t, int j) {
    std::vector<int>& slots = grid[d][t];
    const int slot = slots[j];
    if (t == kInput0 && d == 0 && phase == 0) phase = 1;
    if (phase == 1 || (phase == 0 && !with_weights)) {
      if (phase == 1 && t == kForward0 && j == microbatches - 1) phase = 2;
      occupied[d][slot] = true;
      return;
    }
    int after = -1;
    if ((t == kForward0 || t == kInput1) && d > 0) after = std::max(after, grid[d - 1][t][j]);
    if ((t == kForward1 || t == kInput0) && d + 1 < devices) after = std::max(after, grid[d + 1][t][j]);
    if (t > 0 && t < kBlockTypes) after = std::max(after, grid[d][t - 1][j]);
    if (t == kWeight) {  // the j-th W follows the device's j-th I
      std::vector<int> inputs = grid[d][kInput1];
      inputs.insert(inputs.end(), grid[d][kInput0].begin(), grid[d][kInput0].end());
      std::sort(inputs.begin(), inputs.end());
      after = std::max(after, inputs[j]);
    }
    if (j > 0) after = std::max(after, slots[j - 1]);
    bool moved = false;
    for (int candidate = after + 1; candidate < slot && !moved; ++candidate) {
      if (occupied[d][candidate]) continue;
      slots[j] = candidate;
      moved = activation_peak(grid[d]) <= limit;
    }
    if (!moved) slots[j] = slot;
    occupied[d][slots[j]] = true;
  });
  if (!with_weights) {
    for (DeviceGrid& device : grid) device = place_weights(device, false);
  }
  return squeeze(grid);
}

}  // namespace

DeviceActionLists v_building_block_lists(VMemory variant, int devices, int microbatches) {
  const int n = devices;
  const int m = microbatches;
  Grid grid(n, DeviceGrid(kBlockTypes));
  for (int r = 0; r < n; ++r) {
    const std::array<int, kBlockTypes> offsets = block_offsets(variant, n, r);
    for (int t = 0; t < kBlockTypes; ++t) {
      for (int j = 0; j < m; ++j) grid[r][t].push_back(offsets[t] + kBlockInterval * j);
    }
  }
  grid = pull_earlier(grid, true, m);
  for (DeviceGrid& device : grid) device.resize(kBlockTypes);
  grid = pull_earlier(grid, false, m);
  DeviceActionLists lists(n);
  for (int r = 0; r < n; ++r) {
    DeviceGrid device = grid[r];
    device.resize(kBlockTypes);
    device = place_weights(device, true);
    const int down = r;
    const int up = 2 * n - 1 - r;
    std::vector<std::tuple<int, int, int>> ops;  // (slot, type, j): the device's order is its slot order
    for (int t = 0; t < static_cast<int>(device.size()); ++t) {
      for (int j = 0; j < static_cast<int>(device[t].size()); ++j) ops.emplace_back(device[t][j], t, j);
    }
    std::sort(ops.begin(), ops.end());
    for (const auto& [slot, type, j] : ops) {
      switch (type) {
        case kForward0:
          lists[r].push_back(forward(down, j));
          break;
        case kForward1:
          lists[r].push_back(forward(up, j));
          break;
        case kInput1:
          lists[r].push_back(backward_input(up, j));
          break;
        case kInput0:
          lists[r].push_back(backward_input(down, j));
          break;
        case kWeight:  // split: the Ws of chunk 1's Is
          lists[r].push_back(backward_weight(up, j));
          break;
        case kWeight0:
          lists[r].push_back(backward_weight(down, j));
          break;
      }
    }
  }
  return lists;
}

}  // namespace pipesim
