// DualPipeV (DeepSeek-V3's DualPipe folded into a V, arXiv 2412.19437; PyTorch's ScheduleDualPipeV): V
// placement, device r holds stage r (chunk 0, going down) and stage 2N-1-r (chunk 1, coming back); in its
// steady phase a device overlaps the forward of one chunk with the full backward of the other in one slot
// (fused F&B, Action::fused_with_next), which is where DualPipe hides communication behind computation. The
// order is DualPipe's eight steps (schedules/dualpipe_steps.h) with half = N, position r, the m microbatches
// in both directions (chunk 0 is phase 0) and the last device turning the V. m >= 2N.
#include <fmt/format.h>

#include "base/errors.h"
#include "schedules/dualpipe_steps.h"
#include "schedules/registry.h"
#include "schedules/zb_handcrafted.h"

namespace pipesim {

namespace {

// Built the same way into either container: a vector for the batch's lists, runs for the plan (one device's
// vector at a time).
template <typename List>
std::vector<List> dualpipe_v_lists_as(int devices, int microbatches) {
  const int n = devices;
  std::vector<List> lists(n);
  for (int r = 0; r < n; ++r) {
    DualPipePhases phases;
    phases.stage_of_phase = {r, 2 * n - 1 - r};
    lists[r] = list_as<List>(dualpipe_actions(dualpipe_steps(n, r, microbatches, r == n - 1), phases));
  }
  return lists;
}

}  // namespace

DeviceActionLists dualpipe_v_lists(int devices, int microbatches) {
  return dualpipe_v_lists_as<ActionList>(devices, microbatches);
}

std::vector<ActionRuns> dualpipe_v_runs(int devices, int microbatches) {
  return dualpipe_v_lists_as<ActionRuns>(devices, microbatches);
}

namespace {

class DualPipeV final : public StaticSchedule {
 public:
  std::string label() const override { return "dualpipe-v"; }
  PipelineLayout layout(int devices) const override { return PipelineLayout::v_shape(devices); }
  bool splits_backward() const override { return true; }
  bool fuses_forward_backward() const override { return true; }
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
  std::vector<ActionRuns> batch_runs(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    check(spec);
    return dualpipe_v_runs(spec.devices, spec.microbatches);
  }
};

}  // namespace

std::unique_ptr<Schedule> make_dualpipe_v(const ScheduleParams& /*params*/) {
  return std::make_unique<DualPipeV>();
}

}  // namespace pipesim
