// ZB-H2 (Zero Bubble, handcrafted, about twice 1F1B's memory). Stage i (1-based) of N runs 2(N-i)+1
// warm-up forwards: exactly what fits, at F=I, in the (N-i+1)F + (N-i)I before its first gradient
// arrives, so no stage waits in the warm-up. Then I, W, F per microbatch, each W 2(i-1) steps behind its
// I: the last stage runs I's as fast as forwards arrive and keeps 2N-2 W's for its tail, so the batch is
// a parallelogram (stage i busy from (i-1)F to (i-1)F + m(F+I+W)). With no comm, uniform stages,
// m >= 2N-1, W <= F and 2W <= F+I, the Zero Bubble per-batch bubble is (N-1)(F+I-2W) (0 at F=I=W); with
// W <= F and 2W > F+I it is 0.
#include "schedules/registry.h"
#include "schedules/zb_handcrafted.h"

namespace pipesim {
namespace {

class ZbH2 final : public StaticSchedule {
 public:
  std::string label() const override { return "zb-h2"; }
  bool splits_backward() const override { return true; }
  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    return zb_h2_lists(spec.devices, spec.microbatches);
  }
  std::vector<ActionRuns> batch_runs(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    return zb_h2_runs(spec.devices, spec.microbatches);
  }
};

}  // namespace

std::unique_ptr<Schedule> make_zb_h2(const ScheduleParams& /*params*/) {
  return std::make_unique<ZbH2>();
}

}  // namespace pipesim
