#pragma once
// The Adam moments over a range of a stage's parameters, shared by AdamW, NAdam and Muon's AdamW part.
#include <cstddef>
#include <span>
#include <vector>

#include "executor/optim/optimizer_config.h"

namespace pipesim::executor {

class AdamMoments {
 public:
  AdamMoments(const OptimizerConfig& config, std::size_t size)
      : config_(config), m_(size, 0.0F), v_(size, 0.0F) {}
  // Updates the moments at [offset, offset + size) with g and writes the bias-corrected direction there:
  // AdamW m_hat / (sqrt(v_hat) + eps); NAdam (Dozat, without the momentum schedule)
  // (beta1 m_t / (1 - beta1^(t+1)) + (1 - beta1) g / (1 - beta1^t)) / (sqrt(v_hat) + eps).
  // `moment_offset` is where this range's moments start.
  void direction(std::span<const float> gradient, std::size_t offset, std::size_t size,
                 std::size_t moment_offset, int step, bool nesterov, std::span<float> u);
  std::size_t size() const { return m_.size(); }

 private:
  OptimizerConfig config_;
  std::vector<float> m_;
  std::vector<float> v_;
};

}  // namespace pipesim::executor
