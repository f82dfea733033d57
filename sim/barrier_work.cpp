#include "sim/barrier_work.h"

#include "base/value_ranges.h"

namespace pipesim {

std::optional<TimeNs> before_barrier_total(const CostModel& costs, const PipelineLayout& layout, int device,
                                           int step) {
  TimeNs total = 0;
  for (int stage : layout.stages_on(device)) {
    const Action u = optimizer_step(stage, step, true);
    const TimeNs part = costs.before_barrier_ns(u);
    if (part < 0 || part > costs.duration(u)) return std::nullopt;
    total = add_time_ns(total, part, "a step's work before its barrier");
  }
  return total;
}

}  // namespace pipesim
