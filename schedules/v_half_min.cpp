// V-Half and V-Min ("Pipeline Parallelism with Controllable Memory", Qi et al. 2024): the V placement with
// the authors' building blocks for about half (V-Half, (N+2)/2 microbatches) and a third (V-Min, (N+4)/3) of
// 1F1B's activation memory (integer division), built as their scheduler builds them
// (schedules/v_building_blocks.h). B split into I and W. One class, as zb-1p and zb-2p share theirs.
#include "schedules/registry.h"
#include "schedules/v_building_blocks.h"

namespace pipesim {
namespace {

class VBuildingBlockSchedule final : public StaticSchedule {
 public:
  explicit VBuildingBlockSchedule(VMemory variant) : variant_(variant) {}
  std::string label() const override { return variant_ == VMemory::kHalf ? "v-half" : "v-min"; }
  PipelineLayout layout(int devices) const override { return PipelineLayout::v_shape(devices); }
  bool splits_backward() const override { return true; }
  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    return v_building_block_lists(variant_, spec.devices, spec.microbatches);
  }

 private:
  VMemory variant_;
};

}  // namespace

std::unique_ptr<Schedule> make_v_half(const ScheduleParams& /*params*/) {
  return std::make_unique<VBuildingBlockSchedule>(VMemory::kHalf);
}

std::unique_ptr<Schedule> make_v_min(const ScheduleParams& /*params*/) {
  return std::make_unique<VBuildingBlockSchedule>(VMemory::kMin);
}

}  // namespace pipesim
