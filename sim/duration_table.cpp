#include "sim/duration_table.h"

namespace pipesim {

DurationTable::DurationTable(const CostModel& costs, int stages, int microbatches)
    : costs_(costs), stages_(stages), microbatches_(microbatches) {
  duration_ns_.resize(static_cast<size_t>(stages) * microbatches * kKinds);
  for (int mb = 0; mb < microbatches; ++mb) {
    for (int stage = 0; stage < stages; ++stage) {
      for (OpKind kind : {OpKind::F, OpKind::B, OpKind::I, OpKind::W}) {
        duration_ns_[index(kind, stage, mb)] = costs.duration({kind, false, stage, mb});
      }
    }
  }
}

}  // namespace pipesim
