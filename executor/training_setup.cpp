#include "executor/training_setup.h"

namespace pipesim::executor {

std::uint64_t fingerprint(std::span<const float> values) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const std::byte b : std::as_bytes(values)) {
    h ^= static_cast<std::uint64_t>(b);
    h *= 0x100000001b3ULL;
  }
  return h;
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
