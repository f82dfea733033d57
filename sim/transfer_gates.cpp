#include "sim/transfer_gates.h"

namespace pipesim {

TransferGateIndex::TransferGateIndex(const std::vector<TransferGate>& gates, int period_microbatches)
    : period_(period_microbatches) {
  if (period_ <= 0) return;
  for (const TransferGate& g : gates) {
    by_transfer_[key(g.producer_stage, g.forward, g.microbatch)].push_back(g.after);
  }
}

std::uint64_t TransferGateIndex::key(int producer_stage, bool forward, int microbatch) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(producer_stage)) << 33) |
         (static_cast<std::uint64_t>(forward) << 32) | static_cast<std::uint32_t>(microbatch);
}

void TransferGateIndex::ops_before(int producer_stage, bool forward, int microbatch,
                                   std::vector<Action>& out) const {
  out.clear();
  if (by_transfer_.empty()) return;
  const int batch_offset = microbatch / period_ * period_;
  const auto found = by_transfer_.find(key(producer_stage, forward, microbatch - batch_offset));
  if (found == by_transfer_.end()) return;
  for (Action a : found->second) {
    a.microbatch += batch_offset;
    out.push_back(a);
  }
}

}  // namespace pipesim
