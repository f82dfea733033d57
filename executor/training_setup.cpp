#include "executor/training_setup.h"

namespace pipesim::executor {

void sgd_step(std::span<float> params, const std::vector<const std::vector<float>*>& gradients_in_order,
              float learning_rate) {
  if (gradients_in_order.empty()) return;
  const float count = static_cast<float>(gradients_in_order.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    float sum = 0.0F;
    for (const std::vector<float>* g : gradients_in_order) sum += (*g)[i];
    params[i] -= learning_rate * (sum / count);
  }
}

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

}  // namespace pipesim::executor
