#include "sim/action_runs.h"

#include <algorithm>

namespace pipesim {

namespace {

// `later` is `earlier` with its microbatch moved by `stride`.
bool repeats_with_stride(const Action& earlier, const Action& later, int stride) {
  Action moved = earlier;
  moved.microbatch += stride;
  return moved == later;
}

}  // namespace

ActionRuns::ActionRuns(const std::vector<Action>& actions) {
  for (const Action& a : actions) push_back(a);
}

void ActionRuns::push_back(const Action& action) {
  ++size_;
  if (extending_ && extends_last_run(action)) {
    tail_.push_back(action);
    if (tail_.size() == runs_.back().length) {
      ++runs_.back().repeats;
      tail_.clear();
    }
    return;
  }
  extending_ = false;
  tail_.push_back(action);
  find_run_in_tail();
}

bool ActionRuns::extends_last_run(const Action& action) const {
  if (runs_.empty() || runs_.back().repeats < 2) return false;  // a literal run has no stride to follow
  const Run& last = runs_.back();
  return repeats_with_stride(pool_[last.first + tail_.size()], action, last.repeats * last.stride);
}

void ActionRuns::find_run_in_tail() {
  const std::size_t n = tail_.size();
  const std::size_t longest = std::min<std::size_t>(kMaxPeriod, n / 3);
  for (std::size_t p = 1; p <= longest; ++p) {
    const std::size_t begin = n - 3 * p;
    const int stride = tail_[begin + p].microbatch - tail_[begin].microbatch;
    bool periodic = true;
    for (std::size_t i = begin + p; i < n && periodic; ++i) {
      periodic = repeats_with_stride(tail_[i - p], tail_[i], stride);
    }
    if (!periodic) continue;
    flush_tail_front(begin);
    runs_.push_back({static_cast<std::uint32_t>(pool_.size()), static_cast<std::uint32_t>(p), 3, stride});
    pool_.insert(pool_.end(), tail_.begin(), tail_.begin() + static_cast<std::ptrdiff_t>(p));
    tail_.clear();
    extending_ = true;
    return;
  }
  // Nothing repeats within reach of the oldest action: it stays literal.
  if (n >= 3 * static_cast<std::size_t>(kMaxPeriod)) flush_tail_front(1);
}

void ActionRuns::flush_tail_front(std::size_t count) {
  if (count == 0) return;
  const bool literal_last =
      !runs_.empty() && runs_.back().repeats == 1 && runs_.back().first + runs_.back().length == pool_.size();
  if (literal_last) {
    runs_.back().length += static_cast<std::uint32_t>(count);
  } else {
    runs_.push_back({static_cast<std::uint32_t>(pool_.size()), static_cast<std::uint32_t>(count), 1, 0});
  }
  pool_.insert(pool_.end(), tail_.begin(), tail_.begin() + static_cast<std::ptrdiff_t>(count));
  tail_.erase(tail_.begin(), tail_.begin() + static_cast<std::ptrdiff_t>(count));
}

std::vector<Action> ActionRuns::expand() const {
  std::vector<Action> actions;
  actions.reserve(size_);
  for (Cursor c(*this); !c.done(); c.advance()) actions.push_back(c.get());
  return actions;
}

}  // namespace pipesim
