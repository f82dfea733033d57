// Lion (Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms"): u = sign(β1 m + (1 − β1) g), then
// m <- β2 m + (1 − β2) g; one state buffer. Defaults β1 = 0.9, β2 = 0.99 (the study reader sets them); the
// paper's decoupled weight decay is λ W in u on the matrices, as for AdamW here.
#include "executor/optim/optimizer.h"

namespace pipesim::executor {
namespace {

float sign(float x) {
  return x > 0.0F ? 1.0F : (x < 0.0F ? -1.0F : 0.0F);
}

class Lion final : public Optimizer {
 public:
  Lion(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks, std::size_t parameters)
      : config_(config), blocks_(blocks), momentum_(parameters, 0.0F) {}
  void direction(std::span<const float> weights, std::span<const float> gradient, int /*step*/,
                 std::span<float> u) override {
    const float b1 = config_.beta1, b2 = config_.beta2;
    for (std::size_t i = 0; i < gradient.size(); ++i) {
      u[i] = sign(b1 * momentum_[i] + (1.0F - b1) * gradient[i]);
      momentum_[i] = b2 * momentum_[i] + (1.0F - b2) * gradient[i];
    }
    add_weight_decay(config_.weight_decay, blocks_, weights, u);
  }
  Bytes state_bytes() const override { return static_cast<Bytes>(momentum_.size() * sizeof(float)); }

 private:
  OptimizerConfig config_;
  std::vector<ParameterBlock> blocks_;
  std::vector<float> momentum_;
};

}  // namespace

std::unique_ptr<Optimizer> make_lion(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks,
                                     std::size_t parameters) {
  return std::make_unique<Lion>(config, blocks, parameters);
}

}  // namespace pipesim::executor
