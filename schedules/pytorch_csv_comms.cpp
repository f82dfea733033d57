// PyTorch's "compute_comms" CSV: the compute lists with a SEND after each op whose output crosses to another
// rank and the matching RECV on the receiver, placed as PyTorch's lowering pass (_add_send_recv in
// torch/distributed/pipelining/schedules.py) places them: in rounds, ranks in ascending order each take the
// head of their list once its input is on the rank (received, or made by the rank's own adjacent stage); the
// SEND goes right after the op, the RECV at the end of the receiver's list as it stands.
#include <fmt/format.h>

#include <unordered_set>

#include "base/errors.h"
#include "schedules/pytorch_csv.h"

namespace pipesim {
namespace {

enum Held : std::uint64_t { kForwardMade, kGradientMade, kActivationReceived, kGradientReceived };

std::uint64_t key(Held what, int stage, int microbatch) {
  return (static_cast<std::uint64_t>(what) << 62) | (static_cast<std::uint64_t>(stage) << 31) |
         static_cast<std::uint32_t>(microbatch);
}

std::string cell(const Action& a) {
  return fmt::format("{}{}{}", a.stage, op_letter(a.kind), a.microbatch);
}

}  // namespace

std::string format_pytorch_csv_with_comms(const DeviceActionLists& lists, const PipelineLayout& layout) {
  const int ranks = static_cast<int>(lists.size());
  std::vector<std::vector<std::string>> rows(ranks);
  std::vector<std::unordered_set<std::uint64_t>> held(ranks);
  std::vector<size_t> head(ranks, 0);
  const auto ready = [&](int r, const Action& a) {
    const auto has = [&](Held what, int stage) { return held[r].count(key(what, stage, a.microbatch)) > 0; };
    if (a.kind == OpKind::F && !layout.is_first_stage(a.stage)) {
      return has(kActivationReceived, a.stage) || has(kForwardMade, a.stage - 1);
    }
    if ((a.kind == OpKind::B || a.kind == OpKind::I) && !layout.is_last_stage(a.stage)) {
      return has(kGradientReceived, a.stage) || has(kGradientMade, a.stage + 1);
    }
    return true;
  };
  const auto place = [&](int r, const Action& a) {
    if (a.kind == OpKind::F) {
      held[r].insert(key(kForwardMade, a.stage, a.microbatch));
      if (layout.is_last_stage(a.stage) || layout.device(a.stage + 1) == r) return;
      const int to = layout.device(a.stage + 1);
      rows[r].push_back(fmt::format("{}SEND_F{}", a.stage, a.microbatch));
      rows[to].push_back(fmt::format("{}RECV_F{}", a.stage + 1, a.microbatch));
      held[to].insert(key(kActivationReceived, a.stage + 1, a.microbatch));
    } else if (a.kind == OpKind::B || a.kind == OpKind::I) {
      held[r].insert(key(kGradientMade, a.stage, a.microbatch));
      if (layout.is_first_stage(a.stage) || layout.device(a.stage - 1) == r) return;
      const int to = layout.device(a.stage - 1);
      rows[r].push_back(fmt::format("{}SEND_B{}", a.stage, a.microbatch));
      rows[to].push_back(fmt::format("{}RECV_B{}", a.stage - 1, a.microbatch));
      held[to].insert(key(kGradientReceived, a.stage - 1, a.microbatch));
    }
  };
  for (;;) {
    bool left = false;
    bool progress = false;
    for (int r = 0; r < ranks; ++r) {
      const ActionList& list = lists[r];
      if (head[r] == list.size()) continue;
      left = true;
      const Action& a = list[head[r]];
      if (a.kind == OpKind::U) {
        throw InputError(
            fmt::format("PyTorch's CSV format has no optimizer step; cannot write {}", describe(a)));
      }
      const bool fused = a.fused_with_next && head[r] + 1 < list.size();
      if (!ready(r, a) || (fused && !ready(r, list[head[r] + 1]))) continue;
      if (fused) {
        const Action& b = list[head[r] + 1];
        rows[r].push_back(fmt::format("({};{})OVERLAP_F_B", cell(a), cell(b)));
        place(r, a);
        place(r, b);
        head[r] += 2;
      } else {
        rows[r].push_back(cell(a));
        place(r, a);
        head[r] += 1;
      }
      progress = true;
    }
    if (!left) break;
    if (!progress) {
      throw InputError(
          "cannot place the transfers: every rank's next op waits for an input no rank has made (the lists "
          "deadlock)");
    }
  }
  std::string out;
  for (const std::vector<std::string>& row : rows) out += fmt::format("{}\n", fmt::join(row, ","));
  return out;
}

}  // namespace pipesim
