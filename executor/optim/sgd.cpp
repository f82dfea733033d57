// SGD with heavy-ball momentum: v <- mu v + g, u = v. With mu = 0 it keeps no state and u = g exactly, so
// plain SGD runs bit-identically to the executor's original update.
#include "executor/optim/optimizer.h"

namespace pipesim::executor {
namespace {

class Sgd final : public Optimizer {
 public:
  Sgd(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks, std::size_t parameters)
      : config_(config), blocks_(blocks), velocity_(config.momentum == 0.0F ? 0 : parameters, 0.0F) {}
  void direction(std::span<const float> weights, std::span<const float> gradient, int /*step*/,
                 std::span<float> u) override {
    if (velocity_.empty()) {
      std::copy(gradient.begin(), gradient.end(), u.begin());
    } else {
      for (std::size_t i = 0; i < gradient.size(); ++i) {
        velocity_[i] = config_.momentum * velocity_[i] + gradient[i];
        u[i] = velocity_[i];
      }
    }
    add_weight_decay(config_.weight_decay, blocks_, weights, u);
  }
  Bytes state_bytes() const override { return static_cast<Bytes>(velocity_.size() * sizeof(float)); }

 private:
  OptimizerConfig config_;
  std::vector<ParameterBlock> blocks_;
  std::vector<float> velocity_;
};

}  // namespace

std::unique_ptr<Optimizer> make_sgd(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks,
                                    std::size_t parameters) {
  return std::make_unique<Sgd>(config, blocks, parameters);
}

}  // namespace pipesim::executor
