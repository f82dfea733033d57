#pragma once
// A stage's U op: the mean of the gradients finished since its last update (summed in microbatch order),
// the optimizer's direction u_t, the learning rate of the schedule, and the delay correction. The pipeline's
// workers and plain sequential training both update through this class, which keeps synchronous schedules
// bit-identical to gradient accumulation for every optimizer.
#include <cstdint>
#include <memory>
#include <vector>

#include "base/units.h"
#include "executor/optim/optimizer.h"

namespace pipesim::executor {

struct UpdateRule {
  float learning_rate = 0.05F;  // peak
  OptimizerConfig optimizer;
  LrSchedule schedule;
  DelayCorrection correction = DelayCorrection::kNone;
};

class StageUpdater {
 public:
  StageUpdater(const UpdateRule& rule, const std::vector<ParameterBlock>& blocks, std::size_t parameters);
  // One step on params with the mean of the gradients, summed in the order given.
  void update(std::vector<float>& params, const std::vector<const std::vector<float>*>& gradients_in_order);
  // What a forward reads under weight prediction: W - tau * lr * u of the last step (W itself before the
  // first step or for tau <= 0).
  std::vector<float> predicted(const std::vector<float>& weights, int tau) const;
  // The optimizer's state plus the correction's buffer (u_{t-1}).
  Bytes state_bytes() const;
  int steps() const { return steps_; }
  // Gradients applied so far, one per microbatch (a learning curve's samples are those whose gradient
  // every stage has applied).
  std::int64_t applied_microbatches() const { return applied_microbatches_; }

 private:
  UpdateRule rule_;
  std::unique_ptr<Optimizer> optimizer_;
  std::vector<float> mean_;
  std::vector<float> direction_;
  std::vector<float> last_direction_;  // the correction's buffer; empty without a correction
  float last_learning_rate_ = 0.0F;
  int steps_ = 0;
  std::int64_t applied_microbatches_ = 0;
};

}  // namespace pipesim::executor
