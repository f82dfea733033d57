// V-Min ("Pipeline Parallelism with Controllable Memory", Qi et al. 2024): the V placement with the
// authors' building block for about a third of 1F1B's activation memory, (N+4)/3 microbatches
// (integer division), built as their scheduler builds it (schedules/v_building_blocks.h). B split into I and
// W.
#include "schedules/registry.h"
#include "schedules/v_building_blocks.h"

namespace pipesim {
namespace {

class VMin final : public StaticSchedule {
 public:
  std::string label() const override { return "v-min"; }
  PipelineLayout layout(int devices) const override { return PipelineLayout::v_shape(devices); }
  bool splits_backward() const override { return true; }
  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    return v_building_block_lists(VMemory::kMin, spec.devices, spec.microbatches);
  }
};

}  // namespace

std::unique_ptr<Schedule> make_v_min(const ScheduleParams& /*params*/) {
  return std::make_unique<VMin>();
}

}  // namespace pipesim
