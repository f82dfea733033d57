#include "executor/optim/optimizer.h"

namespace pipesim::executor {

std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config,
                                          const std::vector<ParameterBlock>& blocks, std::size_t parameters) {
  switch (config.kind) {
    case OptimizerKind::kSgd:
      return make_sgd(config, blocks, parameters);
    case OptimizerKind::kAdamW:
    case OptimizerKind::kNAdam:
      return make_adam(config, blocks, parameters);
    case OptimizerKind::kMuon:
      return make_muon(config, blocks, parameters);
    case OptimizerKind::kLion:
      return make_lion(config, blocks, parameters);
    case OptimizerKind::kAdan:
      return make_adan(config, blocks, parameters);
    case OptimizerKind::kSoap:
      return make_soap(config, blocks, parameters);
  }
  return make_sgd(config, blocks, parameters);
}

void add_weight_decay(float lambda, const std::vector<ParameterBlock>& blocks, std::span<const float> weights,
                      std::span<float> u) {
  if (lambda == 0.0F) return;
  for (const ParameterBlock& b : blocks) {
    if (!b.is_matrix()) continue;
    for (std::size_t i = b.offset; i < b.offset + b.size(); ++i) u[i] += lambda * weights[i];
  }
}

}  // namespace pipesim::executor
