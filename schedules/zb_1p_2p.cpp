// zb-1p and zb-2p: the Zero Bubble search (schedules/zb_greedy.h) under a per-stage activation limit of
// memory_limit * N * M_B, memory_limit = 1 (1p, 1F1B's memory) or 2 (2p); any value in between (or beyond)
// gives the curve. The best of the authors' greedy (8 flag settings), ZB-H1/H2 where they fit and 1F1B, by
// the figures the run reports. Cost-aware: it plans with the run's cost model and comm.
#include <fmt/format.h>

#include "base/errors.h"
#include "schedules/registry.h"
#include "schedules/zb_greedy.h"

namespace pipesim {
namespace {

class ZbGreedy final : public StaticSchedule {
 public:
  ZbGreedy(std::string name, double default_limit, double memory_limit)
      : name_(std::move(name)), default_limit_(default_limit), memory_limit_(memory_limit) {}

  std::string label() const override {
    if (memory_limit_ == default_limit_) return name_;
    return fmt::format("{}(memory_limit={:g})", name_, memory_limit_);
  }
  bool splits_backward() const override { return true; }
  bool plans_under_memory_limit() const override { return true; }
  OptimizerSync default_sync() const override { return OptimizerSync::kPostValidation; }

  void check(const PipelineSpec& /*spec*/) const override {
    // The greedy keeps stage i at least one forward ahead of stage i+1, so stage 1 must hold N microbatches:
    // below N * M_B no list exists (1F1B's memory is the floor of the curve).
    if (memory_limit_ < 1.0) {
      throw InputError(
          fmt::format("{}: memory_limit {:g} is below 1 (N x M_B, 1F1B's activation memory); the "
                      "Zero Bubble greedy needs at least that much",
                      label(), memory_limit_));
    }
  }

  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& costs) const override {
    check(spec);
    return zb_search(spec, costs, memory_limit_).lists;
  }

 private:
  std::string name_;
  double default_limit_;
  double memory_limit_;  // per-stage activation limit in units of N * M_B
};

std::unique_ptr<Schedule> make_zb_greedy(const char* name, double default_limit,
                                         const ScheduleParams& params) {
  return std::make_unique<ZbGreedy>(name, default_limit,
                                    params.get_double("memory_limit", default_limit, 0.0));
}

}  // namespace

std::unique_ptr<Schedule> make_zb_1p(const ScheduleParams& params) {
  return make_zb_greedy("zb-1p", 1.0, params);
}
std::unique_ptr<Schedule> make_zb_2p(const ScheduleParams& params) {
  return make_zb_greedy("zb-2p", 2.0, params);
}

}  // namespace pipesim
