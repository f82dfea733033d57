// AdamW and NAdam: bias-corrected Adam moments, decoupled weight decay on matrices.
#include "executor/optim/adam.h"

#include <cmath>

#include "executor/optim/optimizer.h"

namespace pipesim::executor {

void AdamMoments::direction(std::span<const float> gradient, std::size_t offset, std::size_t size,
                            std::size_t moment_offset, int step, bool nesterov, std::span<float> u) {
  const float b1 = config_.beta1;
  const float b2 = config_.beta2;
  const double c1 = 1.0 - std::pow(static_cast<double>(b1), step);
  const double c1_next = 1.0 - std::pow(static_cast<double>(b1), step + 1);
  const double c2 = 1.0 - std::pow(static_cast<double>(b2), step);
  for (std::size_t k = 0; k < size; ++k) {
    const float g = gradient[offset + k];
    float& m = m_[moment_offset + k];
    float& v = v_[moment_offset + k];
    m = b1 * m + (1.0F - b1) * g;
    v = b2 * v + (1.0F - b2) * g * g;
    const double m_hat = nesterov ? b1 * m / c1_next + (1.0 - b1) * g / c1 : m / c1;
    const double denominator = std::sqrt(v / c2) + config_.epsilon;
    u[offset + k] = static_cast<float>(m_hat / denominator);
  }
}

namespace {

class Adam final : public Optimizer {
 public:
  Adam(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks, std::size_t parameters)
      : config_(config), blocks_(blocks), moments_(config, parameters) {}
  void direction(std::span<const float> weights, std::span<const float> gradient, int step,
                 std::span<float> u) override {
    moments_.direction(gradient, 0, gradient.size(), 0, step, config_.kind == OptimizerKind::kNAdam, u);
    add_weight_decay(config_.weight_decay, blocks_, weights, u);
  }
  Bytes state_bytes() const override { return static_cast<Bytes>(2 * moments_.size() * sizeof(float)); }

 private:
  OptimizerConfig config_;
  std::vector<ParameterBlock> blocks_;
  AdamMoments moments_;
};

}  // namespace

std::unique_ptr<Optimizer> make_adam(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks,
                                     std::size_t parameters) {
  return std::make_unique<Adam>(config, blocks, parameters);
}

}  // namespace pipesim::executor
