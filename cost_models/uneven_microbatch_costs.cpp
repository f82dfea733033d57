#include "cost_models/uneven_microbatch_costs.h"

#include "base/errors.h"

namespace pipesim {

UnevenMicrobatchCostModel::UnevenMicrobatchCostModel(std::unique_ptr<CostModel> larger,
                                                     std::unique_ptr<CostModel> smaller, int larger_count,
                                                     int microbatches)
    : larger_(std::move(larger)),
      smaller_(std::move(smaller)),
      larger_count_(larger_count),
      microbatches_(microbatches) {
  if (!larger_ || !smaller_ || microbatches_ < 1 || larger_count_ < 0 || larger_count_ > microbatches_)
    throw InputError("uneven microbatches: two cost models and 0 <= larger count <= microbatches needed");
}

bool UnevenMicrobatchCostModel::is_larger(const Action& action) const {
  return action.kind == OpKind::U || action.microbatch % microbatches_ < larger_count_;
}

TimeNs UnevenMicrobatchCostModel::duration(const Action& action) const {
  return (is_larger(action) ? larger_ : smaller_)->duration(action);
}

TimeNs UnevenMicrobatchCostModel::hideable_ns(const Action& action) const {
  return (is_larger(action) ? larger_ : smaller_)->hideable_ns(action);
}

TimeNs UnevenMicrobatchCostModel::overlapped_duration(const Action& forward, const Action& backward) const {
  if (is_larger(forward) == is_larger(backward)) {
    return (is_larger(forward) ? larger_ : smaller_)->overlapped_duration(forward, backward);
  }
  return duration(forward) + duration(backward);  // sizes differ: no overlap gain claimed
}

}  // namespace pipesim
