#include "api/unmodelled_check.h"

#include <fmt/format.h>

#include "base/errors.h"

namespace pipesim {

std::vector<UnmodelledFeature> unmodelled_features(const Scenario& scenario) {
  if (!scenario.transformer) return {};
  const TransformerModel& t = scenario.transformer->model;
  return unmodelled_in_force(t.unmodelled, t.seq_len);
}

void require_modelled(const Scenario& scenario) {
  if (scenario.allow_unmodelled) return;
  const std::vector<UnmodelledFeature> features = unmodelled_features(scenario);
  if (features.empty()) return;
  const UnmodelledFeature& first = features.front();
  std::string others;
  for (size_t i = 1; i < features.size(); ++i) others += (others.empty() ? "" : ", ") + features[i].key;
  throw InputError(
      fmt::format("{}: {} is not modelled yet (pipesim would price {}); refused: --allow-unmodelled shows "
                  "the stand-in's figures, every header and JSON document naming what they leave out{}",
                  first.where.empty() ? first.key : first.where, first.what, first.stand_in,
                  others.empty() ? "" : fmt::format("; also not modelled: {}", others)));
}

}  // namespace pipesim
