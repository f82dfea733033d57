#include "schedules/zb_handcrafted.h"

#include <algorithm>

namespace pipesim {

namespace {

// Built the same way into either container: a vector for the batch's lists, runs for the plan.
template <typename List>
List handcrafted_list(int stage, int microbatches, const ZbDeviceShape& shape) {
  const int m = microbatches;
  const int warmup = std::clamp(shape.warmup_forwards, 1, m);
  List list;
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

template <typename List, typename ShapeOf>
std::vector<List> pipeline_lists(int devices, int microbatches, ShapeOf shape_of) {
  std::vector<List> lists(devices);
  for (int d = 0; d < devices; ++d) lists[d] = handcrafted_list<List>(d, microbatches, shape_of(d));
  return lists;
}

ZbDeviceShape zb_h1_shape(int devices, int d) {
  return {.warmup_forwards = devices - d, .deferred_weights = d};
}
ZbDeviceShape zb_h2_shape(int devices, int d) {
  return {.warmup_forwards = 2 * (devices - d) - 1, .deferred_weights = 2 * d};
}

}  // namespace

ActionList zb_handcrafted_list(int stage, int microbatches, const ZbDeviceShape& shape) {
  return handcrafted_list<ActionList>(stage, microbatches, shape);
}

DeviceActionLists zb_h1_lists(int devices, int microbatches) {
  return pipeline_lists<ActionList>(devices, microbatches, [&](int d) { return zb_h1_shape(devices, d); });
}

std::vector<ActionRuns> zb_h1_runs(int devices, int microbatches) {
  return pipeline_lists<ActionRuns>(devices, microbatches, [&](int d) { return zb_h1_shape(devices, d); });
}

DeviceActionLists zb_h2_lists(int devices, int microbatches) {
  return pipeline_lists<ActionList>(devices, microbatches, [&](int d) { return zb_h2_shape(devices, d); });
}

std::vector<ActionRuns> zb_h2_runs(int devices, int microbatches) {
  return pipeline_lists<ActionRuns>(devices, microbatches, [&](int d) { return zb_h2_shape(devices, d); });
}

DeviceActionLists one_f_one_b_split_lists(int devices, int microbatches) {
  return pipeline_lists<ActionList>(devices, microbatches, [&](int d) {
    return ZbDeviceShape{.warmup_forwards = devices - d, .deferred_weights = 0};
  });
}

}  // namespace pipesim
