// 1F1B with a flush (PipeDream-Flush, Megatron non-interleaved): stage i (1-based) runs N-i warm-up
// forwards, then one F and one B in turn, then drains its remaining backwards.
#include <algorithm>

#include "schedules/registry.h"

namespace pipesim {
namespace {

// Built the same way into either container: a vector for the batch's lists, runs for the plan.
template <typename List>
std::vector<List> one_f_one_b_flush_lists(int n, int m) {
  std::vector<List> lists(n);
  for (int d = 0; d < n; ++d) {
    const int warmup = std::min(n - 1 - d, m);
    for (int mb = 0; mb < warmup; ++mb) lists[d].push_back(forward(d, mb));
    for (int k = 0; k < m - warmup; ++k) {
      lists[d].push_back(forward(d, warmup + k));
      lists[d].push_back(backward(d, k));
    }
    for (int mb = m - warmup; mb < m; ++mb) lists[d].push_back(backward(d, mb));
  }
  return lists;
}

class OneFOneBFlush final : public ListBuilderSchedule<OneFOneBFlush> {
 public:
  std::string label() const override { return "1f1b-flush"; }
  template <typename List>
  std::vector<List> build_lists(const PipelineSpec& spec) const {
    return one_f_one_b_flush_lists<List>(spec.devices, spec.microbatches);
  }
};

}  // namespace

std::unique_ptr<Schedule> make_one_f_one_b_flush(const ScheduleParams& /*params*/) {
  return std::make_unique<OneFOneBFlush>();
}

}  // namespace pipesim
