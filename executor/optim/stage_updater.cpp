#include "executor/optim/stage_updater.h"

#include <algorithm>

namespace pipesim::executor {

StageUpdater::StageUpdater(const UpdateRule& rule, const std::vector<ParameterBlock>& blocks,
                           std::size_t parameters)
    : rule_(rule),
      optimizer_(make_optimizer(rule.optimizer, blocks, parameters)),
      mean_(parameters, 0.0F),
      direction_(parameters, 0.0F) {}

void StageUpdater::update(std::vector<float>& params,
                          const std::vector<const std::vector<float>*>& gradients_in_order) {
  if (gradients_in_order.empty()) return;
  const float count = static_cast<float>(gradients_in_order.size());
  // Whole gradients at a time, in microbatch order: each element's sum is ((0 + g0) + g1) + ..., the order
  // of plain gradient accumulation, and the loops stream and vectorize (element by element across the
  // gradients they did neither: 17 ms for 1M parameters and 8 microbatches).
  std::fill(mean_.begin(), mean_.end(), 0.0F);
  for (const std::vector<float>* g : gradients_in_order) {
    const float* in = g->data();
    float* sum = mean_.data();
    for (std::size_t i = 0; i < params.size(); ++i) sum[i] += in[i];
  }
  for (float& m : mean_) m /= count;
  ++steps_;
  applied_microbatches_ += static_cast<std::int64_t>(gradients_in_order.size());
  const float lr = rule_.schedule.at(rule_.learning_rate, applied_microbatches_);
  optimizer_->direction(params, mean_, steps_, direction_);
  const bool correcting = rule_.correction != DelayCorrection::kNone;
  if (rule_.correction == DelayCorrection::kErrorFeedback && !last_direction_.empty()) {
    // The step the delayed gradient should have taken plus what the last step's stale direction got wrong.
    for (std::size_t i = 0; i < params.size(); ++i)
      params[i] -= lr * (2.0F * direction_[i] - last_direction_[i]);
  } else {
    for (std::size_t i = 0; i < params.size(); ++i) params[i] -= lr * direction_[i];
  }
  if (correcting) last_direction_ = direction_;
  last_learning_rate_ = lr;
}

std::vector<float> StageUpdater::predicted(const std::vector<float>& weights, int tau) const {
  std::vector<float> out = weights;
  if (tau <= 0 || last_direction_.empty()) return out;
  const float step = static_cast<float>(tau) * last_learning_rate_;
  for (std::size_t i = 0; i < out.size(); ++i) out[i] -= step * last_direction_[i];
  return out;
}

Bytes StageUpdater::state_bytes() const {
  const std::size_t buffer = rule_.correction == DelayCorrection::kNone ? 0 : direction_.size();
  return optimizer_->state_bytes() + static_cast<Bytes>(buffer * sizeof(float));
}

}  // namespace pipesim::executor
