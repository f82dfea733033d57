#include "api/unmodelled_check.h"

#include <fmt/format.h>

#include "base/errors.h"
#include "cost_models/transformer/shapes_flops.h"

namespace pipesim {
namespace {

// The parameters with every expert counted (routed, shared and the router), against the dense stand-in's
// one MLP per layer: what the refusal shows, so that a user sees how far the stand-in is from the model.
double parameters_with_experts(const TransformerModel& t) {
  const MixtureOfExperts& moe = t.unmodelled.moe;
  if (moe.experts <= 0) return model_parameters(t);
  TransformerModel expert = t;
  if (moe.expert_ffn_hidden > 0) expert.ffn_hidden = moe.expert_ffn_hidden;
  const double moe_layers = std::max(0, t.layers - moe.dense_layers);
  const double per_layer = (moe.experts + moe.shared_experts) * mlp_parameters(expert) +
                           static_cast<double>(t.hidden) * moe.experts;
  return model_parameters(t) + moe_layers * (per_layer - mlp_parameters(t));
}

}  // namespace

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
  const TransformerModel& t = scenario.transformer->model;
  std::string sizes;
  if (first.key == "model.moe") {
    sizes = fmt::format(": the stand-in has {:.3g} B parameters, the model with its experts about {:.3g} B",
                        model_parameters(t) / 1e9, parameters_with_experts(t) / 1e9);
  }
  std::string others;
  for (size_t i = 1; i < features.size(); ++i) others += (others.empty() ? "" : ", ") + features[i].key;
  throw InputError(
      fmt::format("{}: {} is not modelled yet (pipesim would price {}{}); refused: --allow-unmodelled shows "
                  "the stand-in's "
                  "figures, every header and JSON document naming what they leave out{}",
                  first.where.empty() ? first.key : first.where, first.what, first.stand_in, sizes,
                  others.empty() ? "" : fmt::format("; also not modelled: {}", others)));
}

}  // namespace pipesim
