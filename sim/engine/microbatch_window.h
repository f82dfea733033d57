#pragma once
// Per-(stage, microbatch) state kept only for the microbatches still in flight: a ring of slots from the
// lowest microbatch with an op still to run to the highest one touched. A microbatch's slots are reused once
// every stage has run all its ops for it, so memory follows the schedule's in-flight depth (N for 1F1B, m for
// GPipe), not the run's length.
#include <cstddef>
#include <vector>

namespace pipesim {

template <typename State>
class MicrobatchWindow {
 public:
  // `stages` slots per microbatch, of which a microbatch visits `stages_visited` (fewer when the layout runs
  // two pipelines side by side, each microbatch through one): it leaves once that many have finished it.
  MicrobatchWindow(int stages, int stages_visited, const State& finished)
      : stages_(stages), stages_visited_(stages_visited), finished_(finished) {
    grow(8);
  }
  MicrobatchWindow(int stages, const State& finished) : MicrobatchWindow(stages, stages, finished) {}

  // The state of (stage, mb), entering mb (and every microbatch below it not yet entered) into the window.
  // Precondition: mb has not been released (callers check with released()).
  State& at(int stage, int mb) {
    if (mb >= end_) enter_through(mb);
    return slots_[index(stage, mb)];
  }
  // Reading never enters: a microbatch not yet entered reads as fresh, a released one as finished.
  const State& get(int stage, int mb) const {
    if (mb < first_) return finished_;
    if (mb >= end_) return fresh_;
    return slots_[index(stage, mb)];
  }
  bool released(int mb) const { return mb < first_; }

  // (stage, mb) has run its last op. Microbatches every stage has finished leave the window in order.
  void stage_finished(int mb) {
    if (++finished_stages_[mb & mask_] != stages_visited_ || mb != first_) return;
    while (first_ < end_ && finished_stages_[first_ & mask_] == stages_visited_) {
      finished_stages_[first_ & mask_] = 0;
      for (int s = 0; s < stages_; ++s) slots_[index(s, first_)] = fresh_;
      ++first_;
    }
  }

  // Microbatches held now and at most: what the window costs.
  int live() const { return end_ - first_; }
  int live_max() const { return live_max_; }

 private:
  std::size_t index(int stage, int mb) const {
    return static_cast<std::size_t>(mb & mask_) * static_cast<std::size_t>(stages_) +
           static_cast<std::size_t>(stage);
  }

  void enter_through(int mb) {
    if (mb - first_ + 1 > mask_ + 1) {
      int capacity = mask_ + 1;
      while (mb - first_ + 1 > capacity) capacity *= 2;
      grow(capacity);
    }
    end_ = mb + 1;
    if (live() > live_max_) live_max_ = live();
  }

  // Re-lays the live microbatches into a ring of `capacity` (a power of two) slots.
  void grow(int capacity) {
    std::vector<State> slots(static_cast<std::size_t>(capacity) * stages_, fresh_);
    std::vector<int> finished_stages(capacity, 0);
    const int new_mask = capacity - 1;
    for (int mb = first_; mb < end_; ++mb) {
      finished_stages[mb & new_mask] = finished_stages_[mb & mask_];
      for (int s = 0; s < stages_; ++s) {
        slots[static_cast<std::size_t>(mb & new_mask) * stages_ + s] = slots_[index(s, mb)];
      }
    }
    slots_ = std::move(slots);
    finished_stages_ = std::move(finished_stages);
    mask_ = new_mask;
  }

  int stages_;
  int stages_visited_;
  State fresh_{};
  State finished_;
  std::vector<State> slots_;
  std::vector<int> finished_stages_;
  int mask_ = -1;
  int first_ = 0;  // lowest microbatch still held
  int end_ = 0;    // one past the highest entered
  int live_max_ = 0;
};

}  // namespace pipesim
