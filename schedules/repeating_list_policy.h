#pragma once
// Runs one batch's fixed list `batches` times, each pass with its microbatches offset by the batch and
// followed by one U per stage the device holds: the same actions as repeat_batches() materializes, without
// holding every batch in memory. The lists are the plan's (ExecutionPlan::repeated), shared.
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
        synchronized_(lists_->synchronized_steps) {}

  std::optional<Action> next(const LocalView& /*view*/) override {
    if (batch_ == batches_) return std::nullopt;
    if (cursor_ < one_batch_.size()) {
      Action a = one_batch_[cursor_];
      a.microbatch += batch_ * microbatches_;
      return a;
    }
    return optimizer_step(stages_[cursor_ - one_batch_.size()], batch_, synchronized_);
  }
  void started(const Action& /*action*/) override {
    if (++cursor_ == one_batch_.size() + stages_.size()) {
      cursor_ = 0;
      ++batch_;
    }
  }
  bool finished() const override { return batch_ == batches_; }
  std::optional<Action> after_next() const override {
    if (batch_ == batches_ || cursor_ + 1 >= one_batch_.size())
      return std::nullopt;  // a fused F ends no batch
    Action a = one_batch_[cursor_ + 1];
    a.microbatch += batch_ * microbatches_;
    return a;
  }

 private:
  std::shared_ptr<const RepeatedBatchLists> lists_;
  const std::vector<Action>& one_batch_;
  std::vector<int> stages_;
  int batches_;
  int microbatches_;
  bool synchronized_;
  int batch_ = 0;
  size_t cursor_ = 0;
};

}  // namespace pipesim
