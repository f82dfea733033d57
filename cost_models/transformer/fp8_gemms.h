#pragma once
// What FP8 training adds around the layers' weight GEMMs (spec/fp8_recipe.h), per op and per step:
//   casts     each FP8 GEMM casts its activation operand (forward: the input X; input gradient: the output
//             gradient dY), reading 2 bytes per element and writing the row-wise and the column-wise FP8
//             copies (1 + 1: Hopper's FP8 GEMMs take only the TN form, so the weight gradient needs the
//             transposed copies): 4 bytes per element; a current-scaling recipe (tensorwise, rowwise) first
//             reads the tensor once more for its amax (+2); delayed, blockwise and mxfp8 scale inside the
//             cast
//   weights   cast once per step (Transformer Engine and torchtitan keep them across a step's microbatches):
//             4 bytes per weight, at the optimizer's bandwidth, and held as the two FP8 copies: 2 bytes per
//             weight beside the model-dtype copy
//   stored    the activations stay as a bf16 layer stores them (Transformer Engine keeps some of them in FP8
//             instead: not modelled, so memory is overstated by up to the linear layers' inputs)
// The casts run at the profile's element-wise bandwidth; the GEMMs at its "fp8" grid.
#include <vector>

#include "cost_models/transformer/device.h"
#include "spec/transformer_model.h"

namespace pipesim::transformer {

// Bytes the recipe's cast moves per element cast (0 without FP8).
double fp8_cast_bytes_per_element(Fp8Recipe recipe);
// Seconds the casts of these GEMMs' activation operands take: the weight GEMMs' (not the attention core's)
// m x k operand, each; 0 without FP8.
double fp8_cast_seconds(const TransformerModel& t, const Device& d, const std::vector<Gemm>& gemms);
// Per weight of the layers: the FP8 copies' bytes held, and the bytes the step's cast moves.
inline constexpr double kFp8WeightCopyBytes = 2;
inline constexpr double kFp8WeightCastBytes = 4;

}  // namespace pipesim::transformer
