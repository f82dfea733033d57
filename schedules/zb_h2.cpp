// PLACEHOLDER (being replaced): 1F1B with B split into I and W, W right after I.
#include <algorithm>

#include "schedules/registry.h"

namespace pipesim {
namespace {

class ZbH2 final : public StaticSchedule {
 public:
  std::string label() const override { return "zb-h2"; }
  bool splits_backward() const override { return true; }
  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    const int n = spec.devices;
    const int m = spec.microbatches;
    DeviceActionLists lists(n);
    for (int d = 0; d < n; ++d) {
      const int warmup = std::min(n - 1 - d, m);
      for (int mb = 0; mb < warmup; ++mb) lists[d].push_back(forward(d, mb));
      for (int k = 0; k < m - warmup; ++k) {
        lists[d].push_back(forward(d, warmup + k));
        lists[d].push_back(backward_input(d, k));
        lists[d].push_back(backward_weight(d, k));
      }
      for (int mb = m - warmup; mb < m; ++mb) {
        lists[d].push_back(backward_input(d, mb));
        lists[d].push_back(backward_weight(d, mb));
      }
    }
    return lists;
  }
};

}  // namespace

std::unique_ptr<Schedule> make_zb_h2(const ScheduleParams& /*params*/) { return std::make_unique<ZbH2>(); }

}  // namespace pipesim
