#include "executor/training_setup.h"

#include <cstring>

namespace pipesim::executor {

std::uint64_t fingerprint(std::span<const float> values) {
  // FNV-1a's step over 64-bit words (two floats at a time), then a final avalanche (splitmix64's): 8x fewer
  // multiplies than bytewise FNV-1a; a weight copy of a few MB hashes in well under a millisecond.
  std::uint64_t h = 0xcbf29ce484222325ULL ^ values.size();
  std::size_t i = 0;
  for (; i + 1 < values.size(); i += 2) {
    std::uint64_t word = 0;
    std::memcpy(&word, &values[i], sizeof word);
    h = (h ^ word) * 0x100000001b3ULL;
  }
  if (i < values.size()) {
    std::uint32_t last = 0;
    std::memcpy(&last, &values[i], sizeof last);
    h = (h ^ last) * 0x100000001b3ULL;
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
