#pragma once
// Layers per chunk of Megatron's virtual pipeline. Megatron gives every chunk the same number of layers: the
// layers must divide by devices × chunks. With layer_split: zb the embedding and the loss count as one layer
// each (the first chunk holds the embedding, the last the output layer and loss), so layers + 2 must.
#include "sim/layout.h"
#include "spec/transformer_model.h"

namespace pipesim {

// What the split spreads over the stages: the layers, plus 2 under zb.
int split_slots(int layers, LayerSplit split);

// The Zero Bubble paper's 1F1B-I: one slot per chunk, v = (layers + 2) / N under zb. Throws InputError when
// N does not divide the slots.
int one_layer_chunks(int layers, int devices, LayerSplit split);

// Throws InputError (saying which chunk counts would do) when the layout's chunks cannot all get the same
// number of slots. A layout of one chunk per device passes: uneven stages are allowed there.
void check_equal_chunk_layers(int layers, LayerSplit split, const PipelineLayout& layout);

}  // namespace pipesim
