// 1F1B with each steady forward fused with a backward (Megatron's combined 1F1B, --overlap-moe-expert-
// parallel-comm; DeepSeek's overlap without DualPipe's second copy): stage i (1-based) runs N - i + 1 warm-up
// forwards, one more than 1F1B, then pairs of F(w + k) and B(k) in one slot (Action::fused_with_next: the
// cost model may hide one op's communication under the other's compute), then drains its remaining
// backwards. The extra warm-up forward keeps the last stage's pair to two microbatches (F(k) and B(k) would
// be one microbatch twice) and holds one more microbatch's activations than 1F1B on every stage.
#include <algorithm>

#include "schedules/registry.h"

namespace pipesim {
namespace {

template <typename List>
std::vector<List> one_f_one_b_overlap_lists(int n, int m) {
  std::vector<List> lists(n);
  for (int d = 0; d < n; ++d) {
    const int warmup = std::min(n - d, m);
    for (int mb = 0; mb < warmup; ++mb) lists[d].push_back(forward(d, mb));
    for (int k = 0; k < m - warmup; ++k) {
      Action f = forward(d, warmup + k);
      f.fused_with_next = true;
      lists[d].push_back(f);
      lists[d].push_back(backward(d, k));
    }
    for (int mb = m - warmup; mb < m; ++mb) lists[d].push_back(backward(d, mb));
  }
  return lists;
}

class OneFOneBOverlap final : public ListBuilderSchedule<OneFOneBOverlap> {
 public:
  std::string label() const override { return "1f1b-overlap"; }
  bool fuses_forward_backward() const override { return true; }
  template <typename List>
  std::vector<List> build_lists(const PipelineSpec& spec) const {
    return one_f_one_b_overlap_lists<List>(spec.devices, spec.microbatches);
  }
};

}  // namespace

std::unique_ptr<Schedule> make_one_f_one_b_overlap(const ScheduleParams& /*params*/) {
  return std::make_unique<OneFOneBOverlap>();
}

}  // namespace pipesim
