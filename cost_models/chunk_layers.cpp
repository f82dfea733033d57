#include "cost_models/chunk_layers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "base/errors.h"

namespace pipesim {
namespace {

std::string slots_phrase(int layers, LayerSplit split) {
  return split == LayerSplit::kZeroBubble
             ? fmt::format("{} layers ({} with the embedding and the loss, layer_split: zb)", layers,
                           split_slots(layers, split))
             : fmt::format("{} layers", layers);
}

}  // namespace

int split_slots(int layers, LayerSplit split) {
  return split == LayerSplit::kZeroBubble ? layers + 2 : layers;
}

int one_layer_chunks(int layers, int devices, LayerSplit split) {
  const int slots = split_slots(layers, split);
  if (devices < 1 || slots % devices != 0) {
    throw InputError(fmt::format("{} do not make one layer per chunk on {} devices",
                                 slots_phrase(layers, split), devices));
  }
  return slots / devices;
}

void check_equal_chunk_layers(int layers, LayerSplit split, const PipelineLayout& layout) {
  if (layout.chunks_per_device <= 1 || split == LayerSplit::kExplicit)
    return;  // explicit: as the user laid out
  if (split == LayerSplit::kBalanced) {
    // The balanced split cuts between attention and MLP halves, so its chunks would not hold whole, equal
    // layers.
    throw InputError(
        fmt::format("chunks={}: layer_split balanced gives chunks unequal parts of layers, and Megatron "
                    "gives every chunk "
                    "the same layers; give this entry `pipeline: {{layer_split: even}}` (or zb)",
                    layout.chunks_per_device));
  }
  const int slots = split_slots(layers, split);
  if (slots % layout.stages == 0) return;
  std::vector<int> fitting = {1};  // one chunk per device may be uneven
  for (int v = 2; v <= slots / layout.devices; ++v) {
    if (slots % (layout.devices * v) == 0) fitting.push_back(v);
  }
  throw InputError(fmt::format(
      "chunks={}: {} do not split equally over {} devices x {} chunks (Megatron gives every chunk the same "
      "layers); chunks that do: {}",
      layout.chunks_per_device, slots_phrase(layers, split), layout.devices, layout.chunks_per_device,
      fmt::join(fitting, ", ")));
}

}  // namespace pipesim
