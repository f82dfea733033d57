// V-Half ("Pipeline Parallelism with Controllable Memory", Qi et al. 2024): the V placement with the
// authors' building block for about half of 1F1B's activation memory, (N+2)/2 microbatches
// (integer division), built as their scheduler builds it (schedules/v_building_blocks.h). B split into I and
// W.
#include "schedules/registry.h"
#include "schedules/v_building_blocks.h"

namespace pipesim {
namespace {

class VHalf final : public StaticSchedule {
 public:
  std::string label() const override { return "v-half"; }
  PipelineLayout layout(int devices) const override { return PipelineLayout::v_shape(devices); }
  bool splits_backward() const override { return true; }
  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    return v_building_block_lists(VMemory::kHalf, spec.devices, spec.microbatches);
  }
};

}  // namespace

std::unique_ptr<Schedule> make_v_half(const ScheduleParams& /*params*/) {
  return std::make_unique<VHalf>();
}

}  // namespace pipesim
