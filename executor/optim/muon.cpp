// Muon: hidden matrices get Nesterov momentum (mu = 0.95 by default), Newton-Schulz orthogonalisation and the
// scale sqrt(max(1, fan_out / fan_in)) (rows / cols of the weight written as y = W x); vectors, the embedding
// and the head get AdamW at adamw_lr_ratio times the learning rate. Decoupled weight decay on all matrices.
#include <algorithm>
#include <cmath>

#include "executor/optim/adam.h"
#include "executor/optim/newton_schulz.h"
#include "executor/optim/optimizer.h"

namespace pipesim::executor {
namespace {

std::size_t count_where(const std::vector<ParameterBlock>& blocks, bool muon) {
  std::size_t total = 0;
  for (const ParameterBlock& b : blocks) {
    if ((b.role == ParameterRole::kMatrix) == muon) total += b.size();
  }
  return total;
}

class Muon final : public Optimizer {
 public:
  Muon(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks)
      : config_(config),
        blocks_(blocks),
        momentum_(count_where(blocks, true), 0.0F),
        adam_(config, count_where(blocks, false)) {}
  void direction(std::span<const float> weights, std::span<const float> gradient, int step,
                 std::span<float> u) override {
    std::size_t muon_offset = 0;
    std::size_t adam_offset = 0;
    for (const ParameterBlock& b : blocks_) {
      if (b.role == ParameterRole::kMatrix) {
        orthogonalised(b, gradient, muon_offset, u);
        muon_offset += b.size();
      } else {
        adam_.direction(gradient, b.offset, b.size(), adam_offset, step, false, u);
        for (std::size_t i = b.offset; i < b.offset + b.size(); ++i) u[i] *= config_.adamw_lr_ratio;
        adam_offset += b.size();
      }
    }
    add_weight_decay(config_.weight_decay, blocks_, weights, u);
  }
  Bytes state_bytes() const override {
    return static_cast<Bytes>((momentum_.size() + 2 * adam_.size()) * sizeof(float));
  }

 private:
  void orthogonalised(const ParameterBlock& b, std::span<const float> gradient, std::size_t state_offset,
                      std::span<float> u) {
    const float mu = config_.momentum;
    std::span<float> out = u.subspan(b.offset, b.size());
    for (std::size_t k = 0; k < b.size(); ++k) {
      float& buffer = momentum_[state_offset + k];
      const float g = gradient[b.offset + k];
      buffer = mu * buffer + g;
      out[k] = g + mu * buffer;  // Nesterov
    }
    newton_schulz(out, b.rows, b.cols, config_.newton_schulz_steps);
    const float scale = static_cast<float>(std::sqrt(std::max(1.0, static_cast<double>(b.cols) / b.rows)));
    for (float& value : out) value *= scale;
  }

  OptimizerConfig config_;
  std::vector<ParameterBlock> blocks_;
  std::vector<float> momentum_;
  AdamMoments adam_;
};

}  // namespace

std::unique_ptr<Optimizer> make_muon(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks,
                                     std::size_t /*parameters*/) {
  return std::make_unique<Muon>(config, blocks);
}

}  // namespace pipesim::executor
