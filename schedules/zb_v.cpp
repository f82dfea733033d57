// ZB-V (Zero Bubble, arXiv 2401.10241 §6; PyTorch's ScheduleZBVZeroBubble): V placement, device r holds
// stages r and 2N-1-r (chunk 0 on the way down, chunk 1 on the way back), B split into I and W. The op order
// is PyTorch's fixed one, per device r with M = max(2N-1, m):
//   1. 2(N-r)-1 forwards of chunk 0;
//   2. r pairs (F of chunk 1, F of chunk 0);
//   3. N-r triples (F, I, W of chunk 1);
//   4. while chunk 1 has fewer forwards than chunk 0, or chunk 0 fewer than M: (F of chunk 0 while fewer
//      than M), I and W of chunk 0, then F, I and W of chunk 1;
//   5. r pairs (I of chunk 0, I of chunk 1); N-r pairs (I of chunk 0, the oldest W of chunk 0 not run);
//      then every W of chunk 1 not run, then every W of chunk 0 not run.
// Ops of microbatches m and above are left out (only when m < 2N-1). With F = I = W and no comm every device
// is busy from its first op to its last once m >= 2N-1: no bubble, at 1F1B's activation memory.
#include <algorithm>

#include "schedules/registry.h"
#include "schedules/zb_handcrafted.h"

namespace pipesim {

namespace {

// Built the same way into either container: a vector for the batch's lists, runs for the plan.
template <typename List>
std::vector<List> zb_v_lists_as(int devices, int microbatches) {
  const int n = devices;
  const int m = microbatches;
  const int rounds = std::max(2 * n - 1, m);
  std::vector<List> lists(n);
  for (int r = 0; r < n; ++r) {
    List& list = lists[r];
    const int down = r;            // chunk 0
    const int up = 2 * n - 1 - r;  // chunk 1
    int forwards[2] = {0, 0};      // per chunk: next F's microbatch
    int input_grads[2] = {0, 0};   // next I's
    int weight_grads[2] = {0, 0};  // next W's
    const auto stage_of = [&](int chunk) { return chunk == 0 ? down : up; };
    const auto put = [&](OpKind kind, int chunk, int& counter) {
      const int mb = counter++;
      if (mb < m) list.push_back({kind, false, stage_of(chunk), mb});
    };
    const auto f = [&](int chunk) { put(OpKind::F, chunk, forwards[chunk]); };
    const auto i = [&](int chunk) { put(OpKind::I, chunk, input_grads[chunk]); };
    const auto w = [&](int chunk) { put(OpKind::W, chunk, weight_grads[chunk]); };
    for (int k = 0; k < 2 * (n - r) - 1; ++k) f(0);
    for (int k = 0; k < r; ++k) {
      f(1);
      f(0);
    }
    for (int k = 0; k < n - r; ++k) {
      f(1);
      i(1);
      w(1);
    }
    while (forwards[1] < forwards[0] || forwards[0] < rounds) {
      if (forwards[0] < rounds) f(0);
      i(0);
      w(0);
      f(1);
      i(1);
      w(1);
    }
    for (int k = 0; k < r; ++k) {
      i(0);
      i(1);
    }
    for (int k = 0; k < n - r; ++k) {
      i(0);
      w(0);
    }
    while (weight_grads[1] < input_grads[1]) w(1);
    while (weight_grads[0] < input_grads[0]) w(0);
  }
  return lists;
}

}  // namespace

DeviceActionLists zb_v_lists(int devices, int microbatches) {
  return zb_v_lists_as<ActionList>(devices, microbatches);
}

namespace {

class ZbV final : public StaticSchedule {
 public:
  std::string label() const override { return "zb-v"; }
  PipelineLayout layout(int devices) const override { return PipelineLayout::v_shape(devices); }
  bool splits_backward() const override { return true; }
  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    return zb_v_lists(spec.devices, spec.microbatches);
  }
  std::vector<ActionRuns> batch_runs(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    return zb_v_lists_as<ActionRuns>(spec.devices, spec.microbatches);
  }
};

}  // namespace

std::unique_ptr<Schedule> make_zb_v(const ScheduleParams& /*params*/) {
  return std::make_unique<ZbV>();
}

}  // namespace pipesim
