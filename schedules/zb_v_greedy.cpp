// zb-v-greedy: ZB-V planned by the Zero Bubble authors' cost-aware scheduler (schedules/zbv_planner.h) with
// the run's costs and comm, under an activation limit of memory_limit x 1F1B's (N x M_B per device, the
// reference's default). zb-v is PyTorch's fixed order; this one adapts to uneven F, I, W and latency.
#include <fmt/format.h>

#include "base/errors.h"
#include "schedules/registry.h"
#include "schedules/zbv_planner.h"

namespace pipesim {
namespace {

constexpr double kDefaultMemoryLimit = 1.0;

class ZbVGreedy final : public StaticSchedule {
 public:
  explicit ZbVGreedy(double memory_limit) : memory_limit_(memory_limit) {}

  std::string label() const override {
    if (memory_limit_ == kDefaultMemoryLimit) return "zb-v-greedy";
    return fmt::format("zb-v-greedy(memory_limit={:g})", memory_limit_);
  }
  PipelineLayout layout(int devices) const override { return PipelineLayout::v_shape(devices); }
  bool splits_backward() const override { return true; }
  bool plans_under_memory_limit() const override { return true; }

  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& costs) const override {
    try {
      return zbv_greedy_best(make_zbv_problem(spec, costs, memory_limit_)).lists;
    } catch (const InputError& e) {
      throw InputError(
          fmt::format("{} at N={}, m={}: {}", label(), spec.devices, spec.microbatches, e.what()));
    }
  }

 private:
  double memory_limit_;  // activation limit per device in units of N x M_B
};

}  // namespace

std::unique_ptr<Schedule> make_zb_v_greedy(const ScheduleParams& params) {
  return std::make_unique<ZbVGreedy>(params.get_double("memory_limit", kDefaultMemoryLimit, 0.0));
}

}  // namespace pipesim
