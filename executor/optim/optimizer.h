#pragma once
// An optimizer turns a stage's mean gradient into an update direction u_t; the step is W <- W - lr * u_t
// (stage_updater.h applies it, with the learning-rate schedule and the delay correction). Keeping the
// learning rate out of u_t lets error feedback and weight prediction work the same for every optimizer.
#include <memory>
#include <span>
#include <vector>

#include "base/units.h"
#include "executor/optim/optimizer_config.h"
#include "executor/optim/parameter_blocks.h"

namespace pipesim::executor {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // u for the mean gradient g of step t (1-based), W the weights before the step. Decoupled weight decay is
  // part of u (lambda * W on matrices).
  virtual void direction(std::span<const float> weights, std::span<const float> gradient, int step,
                         std::span<float> u) = 0;
  virtual Bytes state_bytes() const = 0;
};

// `blocks` cover the stage's flat parameter vector of `parameters` values.
std::unique_ptr<Optimizer> make_optimizer(const OptimizerConfig& config,
                                          const std::vector<ParameterBlock>& blocks, std::size_t parameters);

// One implementation per file; make_optimizer picks by kind.
std::unique_ptr<Optimizer> make_sgd(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks,
                                    std::size_t parameters);
std::unique_ptr<Optimizer> make_adam(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks,
                                     std::size_t parameters);  // AdamW, or NAdam for kind kNAdam
std::unique_ptr<Optimizer> make_lion(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks,
                                     std::size_t parameters);
std::unique_ptr<Optimizer> make_adan(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks,
                                     std::size_t parameters);
std::unique_ptr<Optimizer> make_soap(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks,
                                     std::size_t parameters);
std::unique_ptr<Optimizer> make_muon(const OptimizerConfig& config, const std::vector<ParameterBlock>& blocks,
                                     std::size_t parameters);

// Adds lambda * W to u on the matrices (decoupled weight decay).
void add_weight_decay(float lambda, const std::vector<ParameterBlock>& blocks, std::span<const float> weights,
                      std::span<float> u);

}  // namespace pipesim::executor
