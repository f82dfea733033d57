#pragma once
// A cost-model decorator for robustness checks: seeded lognormal jitter per op, heterogeneous stage speeds
// and occasional stragglers. Deterministic: the same seed and action always get the same duration, whatever
// order the engine asks in.
#include <cstdint>
#include <memory>

#include "sim/cost_model.h"

namespace pipesim {

struct NoiseSpec {
  std::uint64_t seed = 0;
  double jitter_sigma = 0;           // each op's duration x exp(sigma z), z ~ N(0, 1)
  double stage_speed_sigma = 0;      // each stage's durations x exp(sigma z), drawn once per stage
  double straggler_probability = 0;  // chance that an op is a straggler
  double straggler_factor = 1;       // a straggler's duration multiplier
};

// Throws InputError unless the sigmas are in [0, 3], the probability in [0, 1] and the factor in [1, 1000].
void check_noise(const NoiseSpec& noise);

class NoisyCosts final : public CostModel {
 public:
  NoisyCosts(std::unique_ptr<CostModel> base, const NoiseSpec& noise);

  TimeNs duration(const Action& action) const override;
  // The base's, scaled as the step's duration is.
  TimeNs before_barrier_ns(const Action& step) const override;
  Bytes activation_bytes(int stage) const override { return base_->activation_bytes(stage); }
  Bytes weight_grad_activation_bytes(int stage) const override {
    return base_->weight_grad_activation_bytes(stage);
  }
  Bytes transfer_bytes(int stage) const override { return base_->transfer_bytes(stage); }

  // The factor every duration of this stage is multiplied by.
  double stage_speed_factor(int stage) const;

 private:
  std::unique_ptr<CostModel> base_;
  NoiseSpec noise_;
};

}  // namespace pipesim
