#include "executor/measured_costs.h"

#include <algorithm>

namespace pipesim::executor {

MeasuredCostModel::MeasuredCostModel(const std::vector<ExecutedOp>& ops, int stages,
                                     const CostModel& memory_and_transfers)
    : median_ns_(stages), other_(memory_and_transfers) {
  std::vector<std::array<std::vector<TimeNs>, kOpKinds>> samples(stages);
  for (const ExecutedOp& op : ops) {
    samples[op.action.stage][static_cast<int>(op.action.kind)].push_back(op.end_ns - op.start_ns);
  }
  for (int s = 0; s < stages; ++s) {
    for (int k = 0; k < kOpKinds; ++k) {
      std::vector<TimeNs>& v = samples[s][k];
      if (v.empty()) {
        median_ns_[s][k] = 0;
        continue;
      }
      const auto middle = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
      std::nth_element(v.begin(), middle, v.end());
      median_ns_[s][k] = *middle;
    }
  }
}

TimeNs MeasuredCostModel::duration(const Action& action) const {
  return median_ns_[action.stage][static_cast<int>(action.kind)];
}

}  // namespace pipesim::executor
