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

}  // namespace pipesim
