#include "schedules/pytorch_csv_check.h"

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <deque>

#include "base/errors.h"

namespace pipesim {
namespace {

struct CellRef {
  int rank = -1;  // -1: no cell holds this op
  int index = 0;  // position in actions[rank]
};

class CsvChecker {
 public:
  CsvChecker(const PytorchCsvSchedule& csv, const CsvColumns& columns, const std::string& source)
      : csv_(csv), columns_(columns), source_(source) {
    cells_.resize(static_cast<size_t>(csv.stages) * csv.microbatches * kKinds);
  }

  // Each (stage, microbatch) runs one F and one backward: a full B, or an I and a W. Files may mix the two
  // across microbatches and stages (DualPipeV splits only some backwards).
  void check_ops() {
    for (int rank = 0; rank < csv_.ranks; ++rank) {
      const ActionList& row = csv_.actions[rank];
      for (int k = 0; k < static_cast<int>(row.size()); ++k) {
        const Action& a = row[k];
        CellRef& cell = cells_[key(a.kind, a.stage, a.microbatch)];
        if (cell.rank >= 0) {
          fail_at(
              rank, k,
              fmt::format("runs {} of stage {}, microbatch {} a second time (first at column {}); each op "
                          "runs once per microbatch",
                          op_letter(a.kind), a.stage, a.microbatch, column(cell) + 1));
        }
        cell = {rank, k};
      }
    }
    for (int stage = 0; stage < csv_.stages; ++stage) {
      for (int mb = 0; mb < csv_.microbatches; ++mb) {
        const bool full = has(OpKind::B, stage, mb);
        if (full && (has(OpKind::I, stage, mb) || has(OpKind::W, stage, mb))) {
          const CellRef& split = cells_[key(has(OpKind::I, stage, mb) ? OpKind::I : OpKind::W, stage, mb)];
          fail_at(split.rank, split.index,
                  fmt::format("splits the backward of stage {}, microbatch {}, which also runs a full "
                              "backward B at column {}; a backward is either B, or I and W",
                              stage, mb, column(cells_[key(OpKind::B, stage, mb)]) + 1));
        }
        const bool split = has(OpKind::I, stage, mb) || has(OpKind::W, stage, mb);
        const std::vector<OpKind> needed = split ? std::vector<OpKind>{OpKind::F, OpKind::I, OpKind::W}
                                                 : std::vector<OpKind>{OpKind::F, OpKind::B};
        for (OpKind kind : needed) {
          if (has(kind, stage, mb)) continue;
          throw InputError(fmt::format(
              "{}: row {} (rank {}) has no {}{}{}: stage {}, microbatch {} needs {} (stages 0..{}, "
              "microbatches 0..{} appear in the file)",
              source_, csv_.rank_of_stage[stage] + 1, csv_.rank_of_stage[stage], stage, op_letter(kind), mb,
              stage, mb, split ? "F, I and W" : "F and B, or F, I and W", csv_.stages - 1,
              csv_.microbatches - 1));
        }
      }
    }
  }

  // Runs the rows in order without times: a rank waits at its first op whose dependency has not run.
  void check_progress() {
    std::vector<size_t> next(csv_.ranks, 0);
    std::vector<std::vector<int>> waiters(cells_.size());
    std::vector<char> done(cells_.size(), 0);
    std::deque<int> ready;
    for (int rank = 0; rank < csv_.ranks; ++rank) ready.push_back(rank);
    while (!ready.empty()) {
      const int rank = ready.front();
      ready.pop_front();
      const ActionList& row = csv_.actions[rank];
      while (next[rank] < row.size()) {
        // A fused pair (OVERLAP_F_B) is one step: both ops' dependencies first.
        const size_t step = row[next[rank]].fused_with_next && next[rank] + 1 < row.size() ? 2 : 1;
        size_t missing = kNone;
        for (size_t i = 0; i < step && missing == kNone; ++i) {
          missing = first_missing_dependency(row[next[rank] + i], done);
        }
        if (missing != kNone) {
          waiters[missing].push_back(rank);
          break;
        }
        for (size_t i = 0; i < step; ++i) {
          const Action& a = row[next[rank] + i];
          const size_t k = key(a.kind, a.stage, a.microbatch);
          done[k] = 1;
          for (int waiter : waiters[k]) ready.push_back(waiter);
          waiters[k].clear();
        }
        next[rank] += step;
      }
    }
    std::string blocked;
    for (int rank = 0; rank < csv_.ranks; ++rank) {
      if (next[rank] == csv_.actions[rank].size()) continue;
      const ActionList& row = csv_.actions[rank];
      size_t waiting = next[rank];
      if (row[waiting].fused_with_next && first_missing_dependency(row[waiting], done) == kNone) {
        ++waiting;  // the fused pair's second op holds it
      }
      const Action& a = row[waiting];
      const size_t missing = first_missing_dependency(a, done);
      const CellRef& needed = cells_[missing];
      const Action& b = csv_.actions[needed.rank][needed.index];
      blocked += fmt::format("; row {} (rank {}), column {}: {} waits for {} at row {}, column {}", rank + 1,
                             rank, columns_[rank][waiting] + 1, cell_text(a), cell_text(b), needed.rank + 1,
                             column(needed) + 1);
    }
    if (!blocked.empty()) {
      throw InputError(fmt::format(
          "{}: deadlock: these ranks wait for each other forever (a rank runs its row in order; F(s,j) needs "
          "F(s-1,j), B(s,j) or I(s,j) needs F(s,j) and B or I(s+1,j), W(s,j) needs I(s,j); a fused F&B "
          "starts when both are ready){}",
          source_, blocked));
    }
  }

 private:
  static constexpr size_t kKinds = 4;  // F, B, I, W
  static constexpr size_t kNone = static_cast<size_t>(-1);

  size_t key(OpKind kind, int stage, int mb) const {
    return (static_cast<size_t>(stage) * csv_.microbatches + mb) * kKinds + static_cast<size_t>(kind);
  }
  int column(const CellRef& cell) const { return columns_[cell.rank][cell.index]; }
  static std::string cell_text(const Action& a) {
    return fmt::format("'{}{}{}'", a.stage, op_letter(a.kind), a.microbatch);
  }

  bool has(OpKind kind, int stage, int mb) const { return cells_[key(kind, stage, mb)].rank >= 0; }

  size_t first_missing_dependency(const Action& a, const std::vector<char>& done) const {
    std::array<size_t, 2> needs{kNone, kNone};
    if (a.kind == OpKind::F) {
      if (a.stage > 0) needs[0] = key(OpKind::F, a.stage - 1, a.microbatch);
    } else if (a.kind == OpKind::W) {
      needs[0] = key(OpKind::I, a.stage, a.microbatch);
    } else {
      needs[0] = key(OpKind::F, a.stage, a.microbatch);
      if (a.stage + 1 < csv_.stages) {  // the next stage's input gradient: its B, or its I
        const OpKind backward = has(OpKind::B, a.stage + 1, a.microbatch) ? OpKind::B : OpKind::I;
        needs[1] = key(backward, a.stage + 1, a.microbatch);
      }
    }
    for (size_t k : needs) {
      if (k != kNone && !done[k]) return k;
    }
    return kNone;
  }

  [[noreturn]] void fail_at(int rank, int index, const std::string& what) const {
    throw InputError(fmt::format("{}: row {} (rank {}), column {}: {} {}", source_, rank + 1, rank,
                                 columns_[rank][index] + 1, cell_text(csv_.actions[rank][index]), what));
  }

  const PytorchCsvSchedule& csv_;
  const CsvColumns& columns_;
  const std::string& source_;
  std::vector<CellRef> cells_;
};

}  // namespace

void check_csv_schedule(const PytorchCsvSchedule& csv, const CsvColumns& columns, const std::string& source) {
  CsvChecker checker(csv, columns, source);
  checker.check_ops();
  checker.check_progress();
}

}  // namespace pipesim
