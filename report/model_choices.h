#pragma once
// The modelling choices behind a transformer's figures, in words, for the places a figure is shown.
#include <string>

#include "spec/transformer_model.h"

namespace pipesim {

// "causal flash attention (8 key/value heads of 32), SwiGLU MLP (f = 14336), recomputation: none": each
// choice's name as scenarios spell it (base/name_table.h).
std::string model_choices_text(const TransformerModel& model);

}  // namespace pipesim
