// Chimera (Li & Hoefler, SC'21; the authors' runtime, Shigangli/Chimera): two copies of the model in
// opposite directions over the same D devices (PipelineLayout::bidirectional, D even): the "down" pipeline
// holds stage r on device r, the "up" one stage D-1-r. The even microbatches go down, the odd ones up. Device
// r is stage k = min(r, D-1-r) of its own pipeline P (down on the first half of the devices, up on the
// second) and of the other pipeline S at D-1-k; with a = D/2 - k and b = k, each unit of D microbatches runs
//   1. a forwards of P;
//   2. b pairs: F of S, F of P;
//   3. a pairs: F of S, B of S;
//   4. b pairs: B of P, B of S;
// and m/D units are concatenated directly (from the second on, step 1 runs a pairs B of P, F of P: the
// previous unit's last backwards), followed by a backwards of P. Full backwards, one op per slot. Every
// pipeline's microbatches run first in, first out.
#include <fmt/format.h>

#include <algorithm>

#include "base/errors.h"
#include "schedules/registry.h"

namespace pipesim {

namespace {

// Built the same way into either container: a vector for the batch's lists, runs for the plan (one device's
// vector at a time).
template <typename List>
std::vector<List> chimera_lists_as(int devices, int microbatches) {
  const int n = devices;
  const int half = n / 2;
  std::vector<List> lists(n);
  for (int r = 0; r < n; ++r) {
    List& list = lists[r];
    const int k = std::min(r, n - 1 - r);
    const int a = half - k;
    const int b = k;
    const int own = r < half ? 0 : 1;  // P: the pipeline this device is stage k of
    const int other = 1 - own;         // S
    const int stage_of[2] = {r, 2 * n - 1 - r};
    int forwards[2] = {0, 0};
    int backwards[2] = {0, 0};
    const auto f = [&](int pipeline) {
      list.push_back(forward(stage_of[pipeline], 2 * forwards[pipeline]++ + pipeline));
    };
    const auto bw = [&](int pipeline) {
      list.push_back(backward(stage_of[pipeline], 2 * backwards[pipeline]++ + pipeline));
    };
    for (int unit = 0; unit < microbatches / n; ++unit) {
      for (int i = 0; i < a; ++i) {
        if (unit > 0) bw(own);
        f(own);
      }
      for (int i = 0; i < b; ++i) {
        f(other);
        f(own);
      }
      for (int i = 0; i < a; ++i) {
        f(other);
        bw(other);
      }
      for (int i = 0; i < b; ++i) {
        bw(own);
        bw(other);
      }
    }
    for (int i = 0; i < a; ++i) bw(own);
  }
  return lists;
}

}  // namespace

DeviceActionLists chimera_lists(int devices, int microbatches) {
  return chimera_lists_as<ActionList>(devices, microbatches);
}

std::vector<ActionRuns> chimera_runs(int devices, int microbatches) {
  return chimera_lists_as<ActionRuns>(devices, microbatches);
}

namespace {

class Chimera final : public StaticSchedule {
 public:
  std::string label() const override { return "chimera"; }
  PipelineLayout layout(int devices) const override { return PipelineLayout::bidirectional(devices); }
  void check(const PipelineSpec& spec) const override {
    if (spec.devices < 2 || spec.devices % 2 != 0) {
      throw InputError(
          fmt::format("{}: needs an even number of devices (D/2 stages of each pipeline on each "
                      "half), got N = {}",
                      label(), spec.devices));
    }
    if (spec.microbatches % spec.devices != 0) {
      throw InputError(
          fmt::format("{}: m must be a multiple of N = {} (units of N microbatches, N/2 each way, "
                      "concatenated), got {}",
                      label(), spec.devices, spec.microbatches));
    }
  }
  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    check(spec);
    return chimera_lists(spec.devices, spec.microbatches);
  }
  std::vector<ActionRuns> batch_runs(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    check(spec);
    return chimera_runs(spec.devices, spec.microbatches);
  }
};

}  // namespace

std::unique_ptr<Schedule> make_chimera(const ScheduleParams& /*params*/) {
  return std::make_unique<Chimera>();
}

}  // namespace pipesim
