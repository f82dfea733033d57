#include "cost_models/noisy_costs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "base/errors.h"
#include "base/value_ranges.h"

namespace pipesim {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A uniform number in (0, 1) that depends only on the key.
double uniform(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t salt) {
  const std::uint64_t h = splitmix64(splitmix64(splitmix64(seed ^ salt) ^ a) ^ b);
  return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
}

// Box-Muller: a standard normal number that depends only on the key.
double normal(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  const double u1 = uniform(seed, a, b, 1);
  const double u2 = uniform(seed, a, b, 2);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

std::uint64_t action_key(const Action& a) {
  return (static_cast<std::uint64_t>(a.kind) << 56) ^ (static_cast<std::uint64_t>(a.stage) << 32) ^
         static_cast<std::uint32_t>(a.microbatch);
}

constexpr std::uint64_t kStageStream = 0x5354414745ULL;  // keeps stage draws apart from op draws

}  // namespace

void check_noise(const NoiseSpec& noise) {
  // Beyond these a draw can exceed the engine's time range: an input error, never a counterexample.
  const auto in = [](double value, double low, double high) {
    return std::isfinite(value) && value >= low && value <= high;
  };
  if (!in(noise.jitter_sigma, 0, 3) || !in(noise.stage_speed_sigma, 0, 3) ||
      !in(noise.straggler_probability, 0, 1) || !in(noise.straggler_factor, 1, 1000)) {
    throw InputError(fmt::format(
        "noise: jitter sigma {} and stage-speed sigma {} must be in [0, 3], straggler probability {} in [0, "
        "1], "
        "straggler factor {} in [1, 1000]",
        noise.jitter_sigma, noise.stage_speed_sigma, noise.straggler_probability, noise.straggler_factor));
  }
}

NoisyCosts::NoisyCosts(std::unique_ptr<CostModel> base, const NoiseSpec& noise)
    : base_(std::move(base)), noise_(noise) {
  check_noise(noise_);
}

double NoisyCosts::stage_speed_factor(int stage) const {
  return std::exp(noise_.stage_speed_sigma * normal(noise_.seed, kStageStream, stage));
}

TimeNs NoisyCosts::duration(const Action& action) const {
  const std::uint64_t key = action_key(action);
  double factor =
      stage_speed_factor(action.stage) * std::exp(noise_.jitter_sigma * normal(noise_.seed, key, 0));
  if (uniform(noise_.seed, key, 0, 3) < noise_.straggler_probability) factor *= noise_.straggler_factor;
  const double ns = static_cast<double>(base_->duration(action)) * factor;
  if (!computed_time_in_range(ns)) {
    throw InputError(fmt::format("noise made an op take {:.3g} s; expected {}; lower the noise", ns / 1e9,
                                 computed_time_range_text()));
  }
  return static_cast<TimeNs>(std::llround(ns));
}

TimeNs NoisyCosts::before_barrier_ns(const Action& step) const {
  const TimeNs base_part = base_->before_barrier_ns(step);
  if (base_part <= 0) return 0;
  const TimeNs base_whole = base_->duration(step);
  const TimeNs whole = duration(step);
  if (base_whole <= 0) return 0;
  // The same share of the (noisy) step as of the base's.
  const long double share = static_cast<long double>(base_part) / static_cast<long double>(base_whole);
  return std::min(whole, static_cast<TimeNs>(std::llround(share * whole)));
}

}  // namespace pipesim
