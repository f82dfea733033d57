#include "cost_models/transformer/layer_split.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/errors.h"

namespace pipesim {

std::vector<int> split_layers(int layers, int stages, LayerSplit split) {
  if (stages < 1) throw InputError("layer split: need at least one stage");
  // zb: spread layers + 2 as if the embedding and the loss were one layer each, then take them back; the
  // remainder goes to the stages after the first. even: the remainder goes to the first stages.
  const bool zb = split == LayerSplit::kZeroBubble && stages > 1;
  const int slots = zb ? layers + 2 : layers;
  std::vector<int> result(stages, slots / stages);
  const int first_extra = zb ? 1 : 0;
  for (int i = 0; i < slots % stages; ++i) ++result[first_extra + i];
  if (zb) {
    --result.front();
    --result.back();
  }
  for (int i = 0; i < stages; ++i) {
    const bool end = i == 0 || i == stages - 1;
    if (result[i] < 0 || (result[i] == 0 && !(end && zb))) {
      throw InputError(
          fmt::format("{} layers cannot be split over {} stages ({} split): stage {} would get {}", layers,
                      stages, layer_split_name(split), i + 1, result[i]));
    }
  }
  return result;
}

std::vector<int> stage_layer_counts(const TransformerSetup& setup, int stages) {
  if (setup.split != LayerSplit::kExplicit) return split_layers(setup.model.layers, stages, setup.split);
  const std::vector<int>& counts = setup.stage_layers;
  if (static_cast<int>(counts.size()) != stages) {
    throw InputError(
        fmt::format("layer_split [{}]: {} counts for {} stages (one per stage in model order: "
                    "devices x chunks for a schedule with chunks)",
                    fmt::join(counts, ", "), counts.size(), stages));
  }
  int total = 0;
  for (int i = 0; i < stages; ++i) {
    const bool end = i == 0 || i == stages - 1;
    if (counts[i] < 0 || (counts[i] == 0 && !end)) {
      throw InputError(
          fmt::format("layer_split [{}]: stage {} has {} layers; only the first and the last stage "
                      "(with the embedding or the output layer) may have none",
                      fmt::join(counts, ", "), i + 1, counts[i]));
    }
    total += counts[i];
  }
  if (total != setup.model.layers) {
    throw InputError(fmt::format("layer_split [{}]: {} layers in all, but the model has {}",
                                 fmt::join(counts, ", "), total, setup.model.layers));
  }
  return counts;
}

}  // namespace pipesim
