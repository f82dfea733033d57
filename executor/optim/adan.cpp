// Adan (Xie et al. 2022, "Adan: Adaptive Nesterov Momentum Algorithm"), as the authors' implementation steps
// it, with their decay convention (β1 = 0.98, β2 = 0.92, β3 = 0.99 by default, set by the study reader):
//   d = g − g_prev (0 at the first step), m <- β1 m + (1 − β1) g, v <- β2 v + (1 − β2) d,
//   n <- β3 n + (1 − β3) (g + β2 d)^2, denominator sqrt(n / (1 − β3^t)) + ε,
//   u = (m / (1 − β1^t) + β2 v / (1 − β2^t)) / denominator (+ λ W on the matrices: their no_prox form, the
//   decoupled decay W(1 − ηλ) the other optimizers here use; their default divides by 1 + ηλ instead).
// Four state buffers: m, v, n and the previous gradient.
#include <cmath>

#include "executor/optim/optimizer.h"

namespace pipesim::executor {
namespace {

class Adan final : public Optimizer {
 public:
  Adan(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks, std::size_t parameters)
      : config_(config),
        blocks_(blocks),
        m_(parameters, 0.0F),
        v_(parameters, 0.0F),
        n_(parameters, 0.0F),
        previous_(parameters, 0.0F) {}
  void direction(std::span<const float> weights, std::span<const float> gradient, int step,
                 std::span<float> u) override {
    const float b1 = config_.beta1, b2 = config_.beta2, b3 = config_.beta3;
    const double t = step;
    const float c1 = static_cast<float>(1.0 - std::pow(b1, t));
    const float c2 = static_cast<float>(1.0 - std::pow(b2, t));
    const float c3_sqrt = static_cast<float>(std::sqrt(1.0 - std::pow(b3, t)));
    for (std::size_t i = 0; i < gradient.size(); ++i) {
      const float g = gradient[i];
      const float d = step == 1 ? 0.0F : g - previous_[i];
      m_[i] = b1 * m_[i] + (1.0F - b1) * g;
      v_[i] = b2 * v_[i] + (1.0F - b2) * d;
      const float nesterov = g + b2 * d;
      n_[i] = b3 * n_[i] + (1.0F - b3) * nesterov * nesterov;
      const float denominator = std::sqrt(n_[i]) / c3_sqrt + config_.epsilon;
      u[i] = (m_[i] / c1 + b2 * v_[i] / c2) / denominator;
      previous_[i] = g;
    }
    add_weight_decay(config_.weight_decay, blocks_, weights, u);
  }
  Bytes state_bytes() const override { return static_cast<Bytes>(4 * m_.size() * sizeof(float)); }

 private:
  OptimizerConfig config_;
  std::vector<ParameterBlock> blocks_;
  std::vector<float> m_, v_, n_, previous_;
};

}  // namespace

std::unique_ptr<Optimizer> make_adan(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks,
                                     std::size_t parameters) {
  return std::make_unique<Adan>(config, blocks, parameters);
}

}  // namespace pipesim::executor
