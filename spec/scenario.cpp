#include "spec/scenario.h"

#include <fmt/format.h>

#include "base/errors.h"

namespace pipesim {

double Scenario::samples_per_microbatch() const {
  return global_batch > 0 ? static_cast<double>(global_batch) / microbatches : microbatch_size;
}

UnevenSplit uneven_split(const Scenario& s) {
  if (s.global_batch <= 0 || s.microbatches < 1) return {};
  return {s.global_batch / s.microbatches, s.global_batch % s.microbatches};
}

std::string microbatch_size_text(const Scenario& s) {
  const UnevenSplit split = uneven_split(s);
  if (split.larger_count > 0) return fmt::format("{}-{}", split.smaller, split.smaller + 1);
  return fmt::format("{:.3g}", s.samples_per_microbatch());
}

Scenario scenario_for(const Scenario& scenario, const ScheduleRequest& request) {
  const PipelineOverride& o = request.pipeline;
  const auto pinned = [&](const char* key) { return scenario.pinned_pipeline_keys.count(key) > 0; };
  // The command line fixed the batch one way; the entry's other way would contradict it.
  const bool batch_pinned = pinned("microbatch_size") || pinned("global_batch");
  const bool takes_microbatches = o.microbatches && !pinned("microbatches");
  const bool takes_microbatch_size = o.microbatch_size && !batch_pinned;
  const bool takes_global_batch = o.global_batch && !batch_pinned;
  const bool takes_split = o.layer_split && !pinned(kLayerSplitKey);
  if (!takes_microbatches && !takes_microbatch_size && !takes_global_batch && !takes_split) return scenario;
  Scenario s = scenario;
  if (takes_microbatches) s.microbatches = *o.microbatches;
  if (takes_microbatch_size) {
    s.microbatch_size = *o.microbatch_size;
    s.global_batch = 0;
  }
  if (takes_global_batch) s.global_batch = *o.global_batch;
  if (takes_split) {
    if (!s.transformer) {
      throw InputError(
          fmt::format("{}: pipeline.layer_split needs a transformer scenario (model: and hardware:)",
                      request.params.where()));
    }
    s.transformer->split = *o.layer_split;
    s.transformer->stage_layers = o.stage_layers;
  }
  if (s.global_batch > 0 && s.global_batch < s.microbatches) {
    throw InputError(fmt::format("{}: global batch {} is smaller than the {} microbatches",
                                 request.params.where(), s.global_batch, s.microbatches));
  }
  return s;
}

std::string pipeline_label(const Scenario& s, const ScheduleRequest& request) {
  if (request.pipeline.empty()) return "";
  const std::string batch = s.global_batch > 0 ? fmt::format("B={} ", s.global_batch) : "";
  const std::string split =
      request.pipeline.layer_split && s.transformer ? " split=" + layer_split_text(*s.transformer) : "";
  return fmt::format(" [{}m={} b={}{}]", batch, s.microbatches, microbatch_size_text(s), split);
}

}  // namespace pipesim
