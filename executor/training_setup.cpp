#include "executor/training_setup.h"

#include <cstring>

namespace pipesim::executor {

std::uint64_t fingerprint(std::span<const float> values) {
  // FNV-1a's step over 64-bit words (two floats at a time) in 8 independent lanes, then the lanes folded and
  // a final avalanche (splitmix64's). One chain of multiplies waits on each multiply's latency (4.2 MB took
  // 0.58 ms, a whole op's worth of time when every microbatch makes a version); 8 lanes keep the multiplier
  // busy, so a copy hashes at about the speed memory delivers it.
  constexpr std::size_t kLanes = 8;
  constexpr std::uint64_t kPrime = 0x100000001b3ULL;
  std::uint64_t lane[kLanes];
  for (std::size_t j = 0; j < kLanes; ++j) lane[j] = (0xcbf29ce484222325ULL + j) ^ values.size();
  const std::size_t words = values.size() / 2;
  std::size_t w = 0;
  for (; w + kLanes <= words; w += kLanes) {
    for (std::size_t j = 0; j < kLanes; ++j) {
      std::uint64_t word = 0;
      std::memcpy(&word, &values[2 * (w + j)], sizeof word);
      lane[j] = (lane[j] ^ word) * kPrime;
    }
  }
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (std::size_t j = 0; j < kLanes; ++j) h = (h ^ lane[j]) * kPrime;
  for (; w < words; ++w) {
    std::uint64_t word = 0;
    std::memcpy(&word, &values[2 * w], sizeof word);
    h = (h ^ word) * kPrime;
  }
  if (values.size() % 2) {
    std::uint32_t last = 0;
    std::memcpy(&last, &values[values.size() - 1], sizeof last);
    h = (h ^ last) * kPrime;
  }
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

StagedModel build_staged_model(const TrainingSetup& setup, int stages) {
  StagedModel model;
  model.units = build_units<float>(setup.shape);
  const std::vector<int> starts =
      balanced_unit_split(unit_costs(model.units, setup.samples_per_microbatch), stages);
  for (int s = 0; s < stages; ++s) {
    model.stages.emplace_back(model.units, starts[s], starts[s + 1]);
    std::vector<float> params(model.stages.back().parameter_count());
    model.stages.back().initialize(params, setup.seed);
    model.initial_parameters.push_back(std::move(params));
  }
  return model;
}

StageUpdater make_stage_updater(const TrainingSetup& setup, const StagedModel& model, int stage) {
  return {setup.update_rule(), model.stages[stage].parameter_blocks(), model.stages[stage].parameter_count()};
}

}  // namespace pipesim::executor
