// ZB-H1 (Zero Bubble, handcrafted, 1F1B memory). Stage i (1-based) of N keeps 1F1B's order and its
// in-flight limit N-i+1: N-i+1 warm-up forwards, then I, W, F per microbatch. Only W moves: stage i
// runs each W i-1 steps after its I. Stage 1 thus waits (N-1)I for its first gradient, as in 1F1B, but
// never in the drain; the last stage, which finishes its I's first, is left with N-1 W's to run while
// the last I's travel up to stage 1, so all stages end together. With no comm, uniform stages, m >= N and
// W <= F, the Zero Bubble per-batch bubble is (N-1)(F+I-W) (1F1B's is (N-1)(F+I+W)); with W > F it is
// (N-1)I, the wait stage 1 cannot avoid.
#include "schedules/registry.h"
#include "schedules/zb_handcrafted.h"

namespace pipesim {
namespace {

class ZbH1 final : public StaticSchedule {
 public:
  std::string label() const override { return "zb-h1"; }
  bool splits_backward() const override { return true; }
  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    return zb_h1_lists(spec.devices, spec.microbatches);
  }
  std::vector<ActionRuns> batch_runs(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    return zb_h1_runs(spec.devices, spec.microbatches);
  }
};

}  // namespace

std::unique_ptr<Schedule> make_zb_h1(const ScheduleParams& /*params*/) {
  return std::make_unique<ZbH1>();
}

}  // namespace pipesim
