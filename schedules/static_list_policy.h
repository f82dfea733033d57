#pragma once
// Runs a fixed list in order: the device always waits for the next entry, ready or not.
#include "sim/policy.h"

namespace pipesim {

class StaticListPolicy final : public DevicePolicy {
 public:
  explicit StaticListPolicy(std::vector<Action> actions) : actions_(std::move(actions)) {}
  std::optional<Action> next(const LocalView& /*view*/) override {
    if (cursor_ == actions_.size()) return std::nullopt;
    return actions_[cursor_];
  }
  void started(const Action& /*action*/) override { ++cursor_; }
  bool finished() const override { return cursor_ == actions_.size(); }
  std::optional<Action> after_next() const override {
    if (cursor_ + 1 >= actions_.size()) return std::nullopt;
    return actions_[cursor_ + 1];
  }

 private:
  std::vector<Action> actions_;
  size_t cursor_ = 0;
};

}  // namespace pipesim
