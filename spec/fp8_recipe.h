#pragma once
// FP8 training of the layers' weight GEMMs (Transformer Engine under Megatron, torchtitan's float8
// converter): each such GEMM casts its inputs to FP8 (E4M3 forward; E5M2 or E4M3 gradients) with scales,
// multiplies at the device's FP8 rate and accumulates in higher precision. How the scales are found is the
// recipe: delayed (an amax history: the cast kernel does one pass), tensorwise and rowwise (the current
// tensor's amax: one more read of it first), blockwise (DeepSeek-V3's 1x128 / 128x128 tiles, scaled inside
// the cast) and mxfp8 (Blackwell's 32-element blocks, likewise). The attention core, the output layer and
// the router stay in the model's dtype, as both frameworks leave them. What it costs is
// cost_models/transformer/fp8_gemms.h.
#include <string>

#include "base/name_table.h"

namespace pipesim {

enum class Fp8Recipe { kNone, kDelayed, kTensorwise, kRowwise, kBlockwise, kMxfp8 };

const NameTable<Fp8Recipe>& fp8_recipe_names();  // delayed, tensorwise, rowwise, blockwise, mxfp8 (no "none")
std::string fp8_recipe_name(Fp8Recipe recipe);   // "none" for kNone

}  // namespace pipesim
