#pragma once
// How whole layers spread over stages (every split but balanced, whose stages hold units).
#include <vector>

#include "spec/transformer_model.h"

namespace pipesim {

// zb). Not for balanced, whose stages hold units rather than whole layers.
std::vector<int> split_layers(int layers, int stages, LayerSplit split);
// The setup's layers per stage for `stages` (virtual) stages: its explicit list, checked (one count per
// stage, summing to the model's layers, a stage without layers only at either end, where the embedding or
// the output layer is), or split_layers.
std::vector<int> stage_layer_counts(const TransformerSetup& setup, int stages);

}  // namespace pipesim
