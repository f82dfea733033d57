#include "schedules/pytorch_csv_check.h"

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <deque>

#include "sim/errors.h"

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
    for (const ActionList& row : csv.actions) {
      for (const Action& a : row) split_ = split_ || a.kind == OpKind::I || a.kind == OpKind::W;
    }
    cells_.resize(static_cast<size_t>(csv.stages) * csv.microbatches * kKinds);
  }

  void check_ops() {
    for (int rank = 0; rank < csv_.ranks; ++rank) {
      const ActionList& row = csv_.actions[rank];
      for (int k = 0; k < static_cast<int>(row.size()); ++k) {
        const Action& a = row[k];
        if (split_ && a.kind == OpKind::B) {
          fail_at(rank, k,
                  "is a full backward B, but the file splits backwards into I and W elsewhere; use "
                  "either B or I and W for every op");
        }
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
    const std::vector<OpKind> needed = split_ ? std::vector<OpKind>{OpKind::F, OpKind::I, OpKind::W}
                                              : std::vector<OpKind>{OpKind::F, OpKind::B};
    for (int stage = 0; stage < csv_.stages; ++stage) {
      for (int mb = 0; mb < csv_.microbatches; ++mb) {
        for (OpKind kind : needed) {
          if (cells_[key(kind, stage, mb)].rank >= 0) continue;
          throw InputError(fmt::format(
              "{}: row {} (rank {}) has no {}{}{}: stage {}, microbatch {} needs {} (stages 0..{}, "
              "microbatches 0..{} appear in the file)",
              source_, csv_.rank_of_stage[stage] + 1, csv_.rank_of_stage[stage], stage, op_letter(kind), mb,
              stage, mb, split_ ? "F, I and W" : "F and B", csv_.stages - 1, csv_.microbatches - 1));
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
        const Action& a = row[next[rank]];
        const size_t missing = first_missing_dependency(a, done);
        if (missing != kNone) {
          waiters[missing].push_back(rank);
          break;
        }
        const size_t k = key(a.kind, a.stage, a.microbatch);
        done[k] = 1;
        for (int waiter : waiters[k]) ready.push_back(waiter);
        waiters[k].clear();
        ++next[rank];
      }
    }
    std::string blocked;
    for (int rank = 0; rank < csv_.ranks; ++rank) {
      if (next[rank] == csv_.actions[rank].size()) continue;
      const Action& a = csv_.actions[rank][next[rank]];
      const size_t missing = first_missing_dependency(a, done);
      const CellRef& needed = cells_[missing];
      const Action& b = csv_.actions[needed.rank][needed.index];
      blocked += fmt::format("; row {} (rank {}), column {}: {} waits for {} at row {}, column {}", rank + 1,
                             rank, columns_[rank][next[rank]] + 1, cell_text(a), cell_text(b),
                             needed.rank + 1, column(needed) + 1);
    }
    if (!blocked.empty()) {
      throw InputError(fmt::format(
          "{}: deadlock: these ranks wait for each other forever (a rank runs its row in order; F(s,j) needs "
          "F(s-1,j), {}(s,j) needs F(s,j) and {}(s+1,j){}){}",
          source_, split_ ? "I" : "B", split_ ? "I" : "B", split_ ? ", W(s,j) needs I(s,j)" : "", blocked));
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

  size_t first_missing_dependency(const Action& a, const std::vector<char>& done) const {
    const OpKind backward = split_ ? OpKind::I : OpKind::B;
    std::array<size_t, 2> needs{kNone, kNone};
    if (a.kind == OpKind::F) {
      if (a.stage > 0) needs[0] = key(OpKind::F, a.stage - 1, a.microbatch);
    } else if (a.kind == OpKind::W) {
      needs[0] = key(OpKind::I, a.stage, a.microbatch);
    } else {
      needs[0] = key(OpKind::F, a.stage, a.microbatch);
      if (a.stage + 1 < csv_.stages) needs[1] = key(backward, a.stage + 1, a.microbatch);
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
  bool split_ = false;
  std::vector<CellRef> cells_;
};

}  // namespace

void check_csv_schedule(const PytorchCsvSchedule& csv, const CsvColumns& columns, const std::string& source) {
  CsvChecker checker(csv, columns, source);
  checker.check_ops();
  checker.check_progress();
}

}  // namespace pipesim
