#pragma once
// The modelling choices behind a transformer's figures, in words, for the places a figure is shown.
#include <string>

#include "spec/transformer_model.h"

namespace pipesim {

// "causal flash attention (8 key/value heads of 32), SwiGLU MLP (f = 14336), recomputation: none": each
// choice's name as scenarios spell it (base/name_table.h).
std::string model_choices_text(const TransformerModel& model);

// Everything a transformer run's figures rest on, for the result's model_choices: model_choices_text, then
// the profile's op-time scaling, the job around the pipeline (tensor, context and data parallelism, ZeRO, the
// rank order; a device is a pipeline rank of t x c GPUs), how many nodes the pipeline ranks span (0: not
// said), and the hardware profile with its usable memory and fit.
std::string run_model_choices_text(const TransformerSetup& setup, int pipeline_devices,
                                   size_t pipeline_nodes);

}  // namespace pipesim
