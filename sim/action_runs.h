#pragma once
// A device's action list held as runs: a short pattern of actions repeated with every microbatch advancing
// by the same stride each repetition (1F1B's steady F_k+w, B_k is one run of two actions repeated m-w times).
// A static plan holds its lists this way, so that a formula schedule's plan costs a few runs per device
// instead of 12 bytes per op of a batch: memory flat in m. Lists with no repeating shape cost what a vector
// would (their actions sit in one literal run).
//
// push_back() finds runs on the fly: an action that continues the last run's next repetition extends it;
// otherwise, once the last 3p actions not yet in a run are three repetitions of a pattern of p <= 8
// actions, they become a run. Every list reads back exactly as pushed (tests hold it on every schedule).
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sim/action.h"

namespace pipesim {

class ActionRuns {
 public:
  static constexpr int kMaxPeriod = 8;  // longest pattern push_back() looks for

  // One pattern (pool_[first, first + length)) repeated `repeats` times, microbatches + stride each time.
  struct Run {
    std::uint32_t first = 0;
    std::uint32_t length = 0;
    std::int32_t repeats = 0;
    std::int32_t stride = 0;
  };

  ActionRuns() = default;
  explicit ActionRuns(const std::vector<Action>& actions);

  void push_back(const Action& action);
  void reserve(std::size_t /*actions*/) {}  // lets list-building code take either container
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::vector<Action> expand() const;
  // Runs (the finished ones, then the tail as one more, literal, if it is not empty) and pattern actions
  // held: what the list costs.
  std::size_t runs() const { return runs_.size() + (tail_.empty() ? 0 : 1); }
  std::size_t stored_actions() const { return pool_.size() + tail_.size(); }

  // Walks the list in order.
  class Cursor {
   public:
    explicit Cursor(const ActionRuns& runs) : list_(&runs) { settle(); }
    bool done() const { return run_ == list_->runs(); }
    Action get() const {
      if (run_ == list_->runs_.size()) return list_->tail_[position_];
      const Run& r = list_->runs_[run_];
      Action a = list_->pool_[r.first + position_];
      a.microbatch += repetition_ * r.stride;
      return a;
    }
    void advance() {
      ++position_;
      settle();
    }

   private:
    // Moves past the ends of patterns and runs.
    void settle() {
      while (run_ < list_->runs()) {
        if (run_ == list_->runs_.size()) {
          if (position_ < list_->tail_.size()) return;
        } else {
          const Run& r = list_->runs_[run_];
          if (position_ < r.length) return;
          position_ = 0;
          if (++repetition_ < r.repeats) return;
        }
        position_ = 0;
        repetition_ = 0;
        ++run_;
      }
    }

    const ActionRuns* list_;
    std::size_t run_ = 0;
    std::uint32_t position_ = 0;
    std::int32_t repetition_ = 0;
  };

 private:
  bool extends_last_run(const Action& action) const;
  void find_run_in_tail();
  void flush_tail_front(std::size_t count);  // the tail's first `count` actions become literal

  std::vector<Run> runs_;
  std::vector<Action> pool_;
  std::vector<Action> tail_;  // pushed actions not yet in a run (at most 3 * kMaxPeriod)
  bool extending_ = false;    // tail_ holds only the start of the last run's next repetition
  std::size_t size_ = 0;
};

}  // namespace pipesim
