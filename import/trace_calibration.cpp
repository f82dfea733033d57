#include "import/trace_calibration.h"

#include <fmt/format.h>

#include "base/errors.h"
#include "cost_models/transformer/cost_model.h"
#include "sim/layout.h"

namespace pipesim {
OpTimeScale op_time_scale_from_trace(const Scenario& scenario, const TracedActions& traced,
                                     const std::string& trace_names) {
  if (!scenario.transformer) {
    throw InputError(
        fmt::format("{}: --trace-costs needs a transformer scenario (model: and hardware:) that "
                    "describes the traced run",
                    scenario.source));
  }
  if (traced.stages < 1) throw InputError(fmt::format("{}: no pipelining action in the trace", trace_names));
  TransformerSetup setup = *scenario.transformer;
  setup.profile.op_time_scale = {};  // the model's own times
  const double b = scenario.samples_per_microbatch();
  const TransformerCostModel model(setup, b, PipelineLayout::linear(traced.stages));
  const auto ms = [](TimeNs ns) { return static_cast<double>(ns) * 1e-6; };
  double forward_measured = 0, forward_predicted = 0;
  double input_measured = 0, input_predicted = 0, weight_measured = 0, weight_predicted = 0;
  double whole_measured = 0, whole_predicted = 0;  // stages traced with B
  for (int stage = 0; stage < traced.stages; ++stage) {
    const auto found = traced.durations_ms.find(stage);
    if (found == traced.durations_ms.end()) {
      throw InputError(fmt::format("{}: stage {} has no traced action", trace_names, stage));
    }
    const auto& kinds = found->second;
    const auto& f = kinds[static_cast<size_t>(OpKind::F)];
    if (f.empty())
      throw InputError(fmt::format("{}: stage {} has no traced forward (F)", trace_names, stage));
    forward_measured += summarize_durations(f).mean;
    forward_predicted += ms(model.duration(forward(stage, 0)));
    const auto& whole = kinds[static_cast<size_t>(OpKind::B)];
    const auto& input = kinds[static_cast<size_t>(OpKind::I)];
    const auto& weight = kinds[static_cast<size_t>(OpKind::W)];
    if (!whole.empty()) {
      whole_measured += summarize_durations(whole).mean;
      whole_predicted += ms(model.duration(backward(stage, 0)));
    } else if (!input.empty() && !weight.empty()) {
      input_measured += summarize_durations(input).mean;
      input_predicted += ms(model.duration(backward_input(stage, 0)));
      weight_measured += summarize_durations(weight).mean;
      weight_predicted += ms(model.duration(backward_weight(stage, 0)));
    } else {
      throw InputError(
          fmt::format("{}: stage {} has no traced backward (B, or I and W)", trace_names, stage));
    }
  }
  OpTimeScale scale;
  scale.forward = forward_measured / forward_predicted;
  // A whole backward measured: its factor for I and W alike, pooled with split stages where both occur.
  const double backward_measured = whole_measured + input_measured + weight_measured;
  const double backward_predicted = whole_predicted + input_predicted + weight_predicted;
  if (whole_measured > 0 || input_predicted <= 0 || weight_predicted <= 0) {
    scale.backward_input = scale.backward_weight = backward_measured / backward_predicted;
  } else {
    scale.backward_input = input_measured / input_predicted;
    scale.backward_weight = weight_measured / weight_predicted;
  }
  if (!(scale.forward > 0 && scale.backward_input > 0 && scale.backward_weight > 0)) {
    throw InputError(fmt::format("{}: the traced times give no positive factor (F {:.3f} ms traced)",
                                 trace_names, forward_measured));
  }
  scale.source = fmt::format(
      "{}: {} stages at {:g} samples per microbatch, traced over predicted, summed over stages: F "
      "{:.3f}/{:.3f} ms, "
      "backward {:.3f}/{:.3f} ms",
      trace_names, traced.stages, b, forward_measured, forward_predicted, backward_measured,
      backward_predicted);
  return scale;
}

}  // namespace pipesim
