#include "schedules/v_building_blocks.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <queue>
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

// A device's slots as one array: the type of the op in each slot, or -1 when it is free. pull_earlier()
// checks the peak once per slot it tries, so it walks this array instead of merging the type lists.
using SlotTypes = std::vector<std::int8_t>;

SlotTypes slot_types(const DeviceGrid& grid) {
  SlotTypes types(static_cast<std::size_t>(last_slot(grid)) + 1, -1);
  for (std::size_t t = 0; t < grid.size(); ++t) {
    for (int slot : grid[t]) types[slot] = static_cast<std::int8_t>(t);
  }
  return types;
}

// activation_peak() of the grid `types` lays out (`has_weights`: it has W lists), up to its last op.
int activation_peak(const SlotTypes& types, bool has_weights) {
  std::size_t end = types.size();
  while (end > 0 && types[end - 1] < 0) --end;
  int live = 0;
  int peak = 0;
  int pending = 0;
  for (std::size_t slot = 0; slot < end; ++slot) {
    const int type = types[slot];
    if (type < 0) {
      if (!has_weights && pending > 0) {
        --live;
        --pending;
      }
      continue;  // live only fell: the peak stands
    }
    if (type == kForward0 || type == kForward1) ++live;
    if (type == kInput1 || type == kInput0) ++pending;
    if (type >= kWeight) --live;
    peak = std::max(peak, live);
  }
  return peak;
}

// The n-th (0-based) earliest slot of two sorted slot lists that share none.
int nth_earliest(const std::vector<int>& a, const std::vector<int>& b, std::size_t n) {
  std::size_t in_a = 0;
  std::size_t in_b = 0;
  const auto next_is_a = [&] { return in_b == b.size() || (in_a < a.size() && a[in_a] < b[in_b]); };
  for (std::size_t skipped = 0; skipped < n; ++skipped) {
    if (next_is_a()) {
      ++in_a;
    } else {
      ++in_b;
    }
  }
  return next_is_a() ? a.at(in_a) : b.at(in_b);
}

// Every op of the grid, earliest slot first (ties: lower device, then type), each given once.
template <typename Visit>
void in_slot_order(const Grid& grid, Visit visit) {
  const int devices = static_cast<int>(grid.size());
  const int types = static_cast<int>(grid[0].size());
  // Each (device, type)'s next op by (slot, device, type): the order the ties go by.
  using Head = std::tuple<int, int, int>;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  std::vector<std::vector<std::size_t>> next(devices, std::vector<std::size_t>(types, 0));
  for (int d = 0; d < devices; ++d) {
    for (int t = 0; t < types; ++t) {
      if (!grid[d][t].empty()) heads.emplace(grid[d][t][0], d, t);
    }
  }
  while (!heads.empty()) {
    const auto [slot, d, t] = heads.top();
    heads.pop();
    const std::size_t j = next[d][t]++;
    if (next[d][t] < grid[d][t].size()) heads.emplace(grid[d][t][next[d][t]], d, t);
    visit(d, t, static_cast<int>(j));
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
  std::vector<SlotTypes> types(devices);
  for (int d = 0; d < devices; ++d) types[d] = slot_types(grid[d]);
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
      after = std::max(after, nth_earliest(grid[d][kInput1], grid[d][kInput0], static_cast<std::size_t>(j)));
    }
    if (j > 0) after = std::max(after, slots[j - 1]);
    bool moved = false;
    SlotTypes& here = types[d];
    for (int candidate = after + 1; candidate < slot && !moved; ++candidate) {
      if (occupied[d][candidate]) continue;
      here[slot] = -1;
      here[candidate] = static_cast<std::int8_t>(t);
      moved = activation_peak(here, with_weights) <= limit;
      if (!moved) {
        here[candidate] = -1;
        here[slot] = static_cast<std::int8_t>(t);
      } else {
        slots[j] = candidate;
      }
    }
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
