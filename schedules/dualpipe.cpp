// DualPipe (DeepSeek-V3, arXiv 2412.19437; deepseek-ai/DualPipe): two copies of the model over the same N
// devices (N even) in opposite directions (PipelineLayout::bidirectional): device r holds stage r of the
// first copy and stage N-1-r of the second. Half the microbatches (the even ones) enter at device 0 and flow
// down the first copy, the other half (odd) enter at device N-1 and flow up the second. Every device runs
// DualPipe's eight steps (schedules/dualpipe_steps.h) at position min(r, N-1-r) of N/2, with m/2
// microbatches per direction: phase 0 is the direction that enters on its own half of the devices, and the
// two middle devices turn. In the steady phase one slot overlaps one direction's F with the other's B
// (fused F&B). The copies' gradients are all-reduced before every step (a barrier). m even, m >= 2N.
#include <fmt/format.h>

#include <algorithm>

#include "base/errors.h"
#include "schedules/dualpipe_steps.h"
#include "schedules/registry.h"

namespace pipesim {

namespace {

// Built the same way into either container: a vector for the batch's lists, runs for the plan (one device's
// vector at a time).
template <typename List>
std::vector<List> dualpipe_lists_as(int devices, int microbatches) {
  const int n = devices;
  const int half = n / 2;
  std::vector<List> lists(n);
  for (int r = 0; r < n; ++r) {
    const int second_half = r >= half ? 1 : 0;
    DualPipePhases phases;
    for (int phase = 0; phase < 2; ++phase) {
      const int copy = phase ^ second_half;
      phases.stage_of_phase[phase] = copy == 0 ? r : 2 * n - 1 - r;  // copy 1's stage N-1-r is stage 2N-1-r
      phases.first_microbatch[phase] = copy;
    }
    phases.microbatch_stride = 2;
    const int position = std::min(r, n - 1 - r);
    const bool turning = r == half - 1 || r == half;
    lists[r] =
        list_as<List>(dualpipe_actions(dualpipe_steps(half, position, microbatches / 2, turning), phases));
  }
  return lists;
}

}  // namespace

DeviceActionLists dualpipe_lists(int devices, int microbatches) {
  return dualpipe_lists_as<ActionList>(devices, microbatches);
}

std::vector<ActionRuns> dualpipe_runs(int devices, int microbatches) {
  return dualpipe_lists_as<ActionRuns>(devices, microbatches);
}

namespace {

class DualPipe final : public StaticSchedule {
 public:
  std::string label() const override { return "dualpipe"; }
  PipelineLayout layout(int devices) const override { return PipelineLayout::bidirectional(devices); }
  bool splits_backward() const override { return true; }
  bool fuses_forward_backward() const override { return true; }
  void check(const PipelineSpec& spec) const override {
    if (spec.devices < 2 || spec.devices % 2 != 0) {
      throw InputError(
          fmt::format("{}: needs an even number of devices (half the pipeline in each direction), "
                      "got N = {}",
                      label(), spec.devices));
    }
    if (spec.microbatches % 2 != 0 || spec.microbatches < 2 * spec.devices) {
      throw InputError(
          fmt::format("{}: needs an even m >= 2N = {} (m/2 >= N microbatches in each direction), "
                      "got {}",
                      label(), 2 * spec.devices, spec.microbatches));
    }
  }
  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    check(spec);
    return dualpipe_lists(spec.devices, spec.microbatches);
  }
  std::vector<ActionRuns> batch_runs(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    check(spec);
    return dualpipe_runs(spec.devices, spec.microbatches);
  }
};

}  // namespace

std::unique_ptr<Schedule> make_dualpipe(const ScheduleParams& /*params*/) {
  return std::make_unique<DualPipe>();
}

}  // namespace pipesim
