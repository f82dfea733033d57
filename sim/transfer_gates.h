#pragma once
// Where a schedule posts its transfers (PyTorch's SEND_F/RECV_F/SEND_B/RECV_B actions): under blocking comm a
// transfer moves only once the sender has reached its SEND and the receiver its RECV, i.e. once the op each
// device runs just before that action has ended. Without blocking comm transfers are posted as soon as
// their data exists and gates are not consulted (README.md, "Scenario format").
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "sim/action.h"

namespace pipesim {

// The output that `producer_stage` makes for `microbatch` (forward: its F's activation; otherwise its B's or
// I's gradient) moves only after `after` has ended. Given for one batch (microbatches 0..m-1); batch b's
// gates are the same shifted by b*m.
struct TransferGate {
  int producer_stage = 0;
  bool forward = true;
  int microbatch = 0;
  Action after;
  friend bool operator==(const TransferGate&, const TransferGate&) = default;
};

// The gates of a run, found by transfer.
class TransferGateIndex {
 public:
  TransferGateIndex() = default;
  TransferGateIndex(const std::vector<TransferGate>& gates, int period_microbatches);
  bool empty() const { return by_transfer_.empty(); }
  // The ops that must have ended before this transfer moves, in the run's microbatch numbering; empty when
  // it is not gated. `out` is cleared first.
  void ops_before(int producer_stage, bool forward, int microbatch, std::vector<Action>& out) const;

 private:
  static std::uint64_t key(int producer_stage, bool forward, int microbatch);
  int period_ = 0;
  std::unordered_map<std::uint64_t, std::vector<Action>> by_transfer_;
};

}  // namespace pipesim
