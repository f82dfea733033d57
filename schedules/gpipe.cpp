// GPipe: every forward of the batch, then every backward, then the optimizer step.
#include "schedules/registry.h"

namespace pipesim {
namespace {

class GPipe final : public StaticSchedule {
 public:
  std::string label() const override { return "gpipe"; }
  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    DeviceActionLists lists(spec.devices);
    for (int d = 0; d < spec.devices; ++d) {
      for (int mb = 0; mb < spec.microbatches; ++mb) lists[d].push_back(forward(d, mb));
      for (int mb = 0; mb < spec.microbatches; ++mb) lists[d].push_back(backward(d, mb));
    }
    return lists;
  }
};

}  // namespace

std::unique_ptr<Schedule> make_gpipe(const ScheduleParams& /*params*/) {
  return std::make_unique<GPipe>();
}

}  // namespace pipesim
