#include "schedules/zb_handcrafted.h"

#include <algorithm>

namespace pipesim {

ActionList zb_handcrafted_list(int stage, int microbatches, const ZbDeviceShape& shape) {
  const int m = microbatches;
  const int warmup = std::clamp(shape.warmup_forwards, 1, m);
  ActionList list;
  list.reserve(3 * static_cast<size_t>(m));
  for (int mb = 0; mb < warmup; ++mb) list.push_back(forward(stage, mb));
  int next_forward = warmup;
  int next_weight = 0;
  for (int k = 0; k < m; ++k) {
    list.push_back(backward_input(stage, k));
    if (k - shape.deferred_weights >= 0) list.push_back(backward_weight(stage, next_weight++));
    if (next_forward < m) list.push_back(forward(stage, next_forward++));
  }
  while (next_weight < m) list.push_back(backward_weight(stage, next_weight++));
  return list;
}

namespace {

template <typename ShapeOf>
DeviceActionLists pipeline_lists(int devices, int microbatches, ShapeOf shape_of) {
  DeviceActionLists lists(devices);
  for (int d = 0; d < devices; ++d) lists[d] = zb_handcrafted_list(d, microbatches, shape_of(d));
  return lists;
}

}  // namespace

DeviceActionLists zb_h1_lists(int devices, int microbatches) {
  return pipeline_lists(devices, microbatches, [&](int d) {
    return ZbDeviceShape{.warmup_forwards = devices - d, .deferred_weights = d};
  });
}

DeviceActionLists zb_h2_lists(int devices, int microbatches) {
  return pipeline_lists(devices, microbatches, [&](int d) {
    return ZbDeviceShape{.warmup_forwards = 2 * (devices - d) - 1, .deferred_weights = 2 * d};
  });
}

DeviceActionLists one_f_one_b_split_lists(int devices, int microbatches) {
  return pipeline_lists(devices, microbatches, [&](int d) {
    return ZbDeviceShape{.warmup_forwards = devices - d, .deferred_weights = 0};
  });
}

}  // namespace pipesim
