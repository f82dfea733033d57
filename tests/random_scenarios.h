#pragma once
// Random configurations shared by the property tests that compare two ways of computing the same figures:
// uneven per-stage costs, each comm model, and noisy costs (jitter and stragglers).
#include <fmt/format.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "cost_models/noisy_costs.h"

namespace pipesim::test {

// A `costs:` line with per-stage F, B, W in [0.5, 3) ms, per-stage activation and parameter bytes and, unless
// the link model carries the comm, a fixed comm latency of 0, 0.15 or 0.3 ms.
inline std::string random_costs(std::mt19937& rng, int stages, bool link) {
  std::uniform_real_distribution<double> ms(0.5, 3.0);
  const auto list = [&](double scale) {
    std::string out = "[";
    for (int s = 0; s < stages; ++s) out += fmt::format("{}{:.3f}", s ? ", " : "", scale * ms(rng));
    return out + "]";
  };
  return fmt::format(
      "costs: {{forward_ms: {}, backward_input_ms: {}, backward_weight_ms: {}, {}"
      "activation_bytes: {}, weight_grad_activation_bytes: 4e5, parameter_bytes: {}}}\n",
      list(1), list(1), list(1),
      link ? "" : fmt::format("comm_ms: {:.2f}, ", std::uniform_int_distribution<int>(0, 2)(rng) * 0.15),
      list(1e6), list(3e6));
}

// The three comm set-ups, indexed 0..2; index 1 is the link model (pass link = true to random_costs).
inline const char* const kRandomCommLines[] = {
    "",  // costs.comm_ms as a fixed latency
    "comm: {model: link, bandwidth_gb_per_s: 2, latency_ms: 0.1}\n",
    "comm: {blocking: true}\n",
};

// A SimulationOptions::decorate_costs that adds 20 % jitter and 5 % stragglers at 4x, seeded.
inline auto jitter_and_stragglers(std::uint64_t seed) {
  return [seed](std::unique_ptr<CostModel> base) -> std::unique_ptr<CostModel> {
    NoiseSpec noise;
    noise.seed = seed;
    noise.jitter_sigma = 0.2;
    noise.straggler_probability = 0.05;
    noise.straggler_factor = 4;
    return std::make_unique<NoisyCosts>(std::move(base), noise);
  };
}

}  // namespace pipesim::test
