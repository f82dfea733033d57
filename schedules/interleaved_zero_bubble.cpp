// PyTorch's ScheduleInterleavedZeroBubble (Zero Bubble's ZB-1P order on the looped placement): interleaved
// 1F1B's rounds (schedules/interleaved_rounds.h) with B split into I and W. Per device r, with v chunks,
// k microbatches a round and S = v m slots:
//   warm-up   min((v-1) k + (N-1-r), S) forwards (one per later device, not interleaved 1F1B's two: W fills
//             the gap instead);
//   steady    one forward, then the I of the oldest backward slot; from the r-th backward on, also the W of
//             the oldest backward whose W has not run;
//   cool-down the remaining Is, each followed by a W in the same way; then every W left.
// Activation memory of interleaved 1F1B or less; W delayed by r backwards on device r.
#include <fmt/format.h>

#include <algorithm>

#include "schedules/interleaved_rounds.h"
#include "schedules/registry.h"

namespace pipesim {
namespace {

class InterleavedZeroBubble final : public ListBuilderSchedule<InterleavedZeroBubble> {
 public:
  explicit InterleavedZeroBubble(int chunks) : chunks_(chunks) {}

  std::string label() const override { return fmt::format("interleaved-zb(chunks={})", chunks_); }
  PipelineLayout layout(int devices) const override { return PipelineLayout::interleaved(devices, chunks_); }
  bool splits_backward() const override { return true; }

  void check(const PipelineSpec& spec) const override { InterleavedRounds::check(spec, label()); }

  // Built the same way into either container: a vector for the batch's lists, runs for the plan.
  template <typename List>
  std::vector<List> build_lists(const PipelineSpec& spec) const {
    check(spec);
    const int n = spec.devices;
    const int slots = spec.microbatches * chunks_;
    const InterleavedRounds order(spec, chunks_);
    std::vector<List> lists(n);
    for (int d = 0; d < n; ++d) {
      List& list = lists[d];
      const int warmup = std::min((chunks_ - 1) * order.microbatches_per_round() + (n - 1 - d), slots);
      int weight_grads = 0;  // backward slots whose W has run
      const auto input_grad_then_weight_grad = [&](int k) {
        list.push_back(backward_input(order.backward_stage(d, k), order.microbatch(k)));
        if (k >= d) {
          list.push_back(
              backward_weight(order.backward_stage(d, weight_grads), order.microbatch(weight_grads)));
          ++weight_grads;
        }
      };
      for (int s = 0; s < warmup; ++s)
        list.push_back(forward(order.forward_stage(d, s), order.microbatch(s)));
      for (int k = 0; k < slots; ++k) {
        const int s = warmup + k;
        if (s < slots) list.push_back(forward(order.forward_stage(d, s), order.microbatch(s)));
        input_grad_then_weight_grad(k);
      }
      for (; weight_grads < slots; ++weight_grads) {
        list.push_back(
            backward_weight(order.backward_stage(d, weight_grads), order.microbatch(weight_grads)));
      }
    }
    return lists;
  }

 private:
  int chunks_;
};

}  // namespace

std::unique_ptr<Schedule> make_interleaved_zero_bubble(const ScheduleParams& params) {
  return std::make_unique<InterleavedZeroBubble>(params.get_int("chunks", 2, 1));
}

}  // namespace pipesim
