#pragma once
// Runs one batch's fixed list `batches` times, each pass with its microbatches offset by the batch and
// followed by one U per stage the device holds: the same actions as repeat_batches() materializes, without
// holding every batch in memory. The lists are the plan's (ExecutionPlan::repeated), shared, held as runs.
#include <memory>
#include <vector>

#include "sim/policy.h"

namespace pipesim {

class RepeatingListPolicy final : public DevicePolicy {
 public:
  RepeatingListPolicy(std::shared_ptr<const RepeatedBatchLists> lists, int device, std::vector<int> stages)
      : lists_(std::move(lists)),
        one_batch_(lists_->one_batch.at(device)),
        stages_(std::move(stages)),
        batches_(lists_->batches),
        microbatches_(lists_->microbatches_per_batch),
        synchronized_(lists_->synchronized_steps),
        cursor_(one_batch_) {}

  std::optional<Action> next(const LocalView& /*view*/) override {
    if (batch_ == batches_) return std::nullopt;
    if (!cursor_.done()) {
      Action a = cursor_.get();
      a.microbatch += batch_ * microbatches_;
      return a;
    }
    return optimizer_step(stages_[step_], batch_, synchronized_);
  }
  void started(const Action& /*action*/) override {
    if (!cursor_.done()) {
      cursor_.advance();
    } else {
      ++step_;
    }
    if (cursor_.done() && step_ == stages_.size()) {
      cursor_ = ActionRuns::Cursor(one_batch_);
      step_ = 0;
      ++batch_;
    }
  }
  bool finished() const override { return batch_ == batches_; }
  std::optional<Action> after_next() const override {
    if (batch_ == batches_ || cursor_.done()) return std::nullopt;
    ActionRuns::Cursor following = cursor_;
    following.advance();
    if (following.done()) return std::nullopt;  // a fused F ends no batch
    Action a = following.get();
    a.microbatch += batch_ * microbatches_;
    return a;
  }

 private:
  std::shared_ptr<const RepeatedBatchLists> lists_;
  const ActionRuns& one_batch_;
  std::vector<int> stages_;
  int batches_;
  int microbatches_;
  bool synchronized_;
  int batch_ = 0;
  ActionRuns::Cursor cursor_;  // the next action of this batch's list
  size_t step_ = 0;            // once the list is done: the next of the batch's U's
};

}  // namespace pipesim
