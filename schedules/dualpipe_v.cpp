// DualPipeV (DeepSeek-V3's DualPipe folded into a V, arXiv 2412.19437; PyTorch's ScheduleDualPipeV): V
// placement, device r holds stage r (chunk 0, going down) and stage 2N-1-r (chunk 1, coming back); in its
// steady phase a device overlaps the forward of one chunk with the full backward of the other in one slot
// (fused F&B, Action::fused_with_next), which is where DualPipe hides communication behind computation. The
// order is PyTorch's, per device r (m >= 2N microbatches; counters per stage, Ws queued behind their Is):
//   1. 2(N-1-r) forwards of chunk 0;
//   2. r+1 pairs: F of chunk 0, F of chunk 1;
//   3. N-1-r triples: I of chunk 1, the oldest queued W, F of chunk 1;
//   4. m-2N+r+1 rounds: F0 fused with B1 (on the last device the first round runs them apart), then F1
//      fused with B0;
//   5. N-1-r rounds: B1, then F1 fused with B0;
//   6. r+1 rounds: a backward of chunk 1, then of chunk 0, full until the middle round and split into I
//      (W queued) from it on (odd devices switch before chunk 1's, even ones after);
//   7. N-1-r rounds: the oldest queued W, then a backward of chunk 0 (split);
//   8. the r+1 Ws still queued.
#include <fmt/format.h>

#include <deque>
#include <utility>

#include "schedules/registry.h"
#include "schedules/zb_handcrafted.h"
#include "sim/errors.h"

namespace pipesim {

DeviceActionLists dualpipe_v_lists(int devices, int microbatches) {
  const int n = devices;
  const int m = microbatches;
  DeviceActionLists lists(n);
  for (int r = 0; r < n; ++r) {
    ActionList& list = lists[r];
    const int down = r;            // chunk 0
    const int up = 2 * n - 1 - r;  // chunk 1
    // Per chunk: the next forward's and the next backward's microbatch (a B and an I count alike).
    int forwards[2] = {0, 0};
    int backwards[2] = {0, 0};
    std::deque<std::pair<int, int>> queued_weight_grads;  // (stage, microbatch) of Is whose W has not run
    const auto stage_of = [&](int chunk) { return chunk == 0 ? down : up; };
    const auto f = [&](int chunk) { list.push_back(forward(stage_of(chunk), forwards[chunk]++)); };
    const auto b = [&](int chunk) { list.push_back(backward(stage_of(chunk), backwards[chunk]++)); };
    const auto i = [&](int chunk) {
      queued_weight_grads.emplace_back(stage_of(chunk), backwards[chunk]);
      list.push_back(backward_input(stage_of(chunk), backwards[chunk]++));
    };
    const auto w = [&] {
      if (queued_weight_grads.empty()) return;
      const auto [stage, mb] = queued_weight_grads.front();
      queued_weight_grads.pop_front();
      list.push_back(backward_weight(stage, mb));
    };
    // F of one chunk in one slot with B of the other.
    const auto f_with_b = [&](int forward_chunk) {
      f(forward_chunk);
      list.back().fused_with_next = true;
      b(1 - forward_chunk);
    };
    for (int k = 0; k < 2 * (n - 1 - r); ++k) f(0);
    for (int k = 0; k < r + 1; ++k) {
      f(0);
      f(1);
    }
    for (int k = 0; k < n - 1 - r; ++k) {
      i(1);
      w();
      f(1);
    }
    for (int k = 0; k < m - 2 * n + r + 1; ++k) {
      if (k == 0 && r == n - 1) {  // the V's turn: chunk 1's first backward follows its own forward
        f(0);
        b(1);
      } else {
        f_with_b(0);
      }
      f_with_b(1);
    }
    for (int k = 0; k < n - 1 - r; ++k) {
      b(1);
      f_with_b(1);
    }
    bool split = false;
    const int middle = (r + 1) / 2;
    for (int k = 0; k < r + 1; ++k) {
      if (k == middle && r % 2 == 1) split = true;
      split ? i(1) : b(1);
      if (k == middle && r % 2 == 0) split = true;
      split ? i(0) : b(0);
    }
    for (int k = 0; k < n - 1 - r; ++k) {
      w();
      split ? i(0) : b(0);
    }
    for (int k = 0; k < r + 1; ++k) w();
  }
  return lists;
}

namespace {

class DualPipeV final : public StaticSchedule {
 public:
  std::string label() const override { return "dualpipe-v"; }
  PipelineLayout layout(int devices) const override { return PipelineLayout::v_shape(devices); }
  bool splits_backward() const override { return true; }
  void check(const PipelineSpec& spec) const override {
    if (spec.microbatches < 2 * spec.devices) {
      throw InputError(fmt::format("{}: needs at least 2N = {} microbatches (one per stage of the V), got {}",
                                   label(), 2 * spec.devices, spec.microbatches));
    }
  }
  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    check(spec);
    return dualpipe_v_lists(spec.devices, spec.microbatches);
  }
};

}  // namespace

std::unique_ptr<Schedule> make_dualpipe_v(const ScheduleParams& /*params*/) {
  return std::make_unique<DualPipeV>();
}

}  // namespace pipesim
