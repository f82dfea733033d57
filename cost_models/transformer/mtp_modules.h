#pragma once
// Multi-token prediction (DeepSeek-V3; Megatron's --mtp-num-layers): D modules after the last layer, module k
// predicting the token k + 1 further on. Each normalises the previous depth's hidden state and the embedding
// of the shifted tokens (two RMSNorms), projects their concatenation 2h -> h (column-parallel, h/t per rank),
// runs one transformer layer (a MoE layer where the model's last layer is one) and the shared output layer
// with its loss. Megatron places every module on the last pipeline stage, beside the output layer, and builds
// the embedding there too (a copy, its gradients reduced with the first stage's, as tied embeddings are); the
// output layer is shared.
//   params    per module: the layer's and 2h²; the embedding's copy once on a last stage that is not also
//             the first (not in the model's count: the same weights)
//   FLOPs     per module: the layer's, the projection's 2·T·2h·h each way and the output layer's 2·T·h·V
//             each way (MFU counts them, as Megatron's FLOPs formula does)
#include "cost_models/transformer/units.h"
#include "spec/transformer_model.h"

namespace pipesim::transformer {

// The D modules' costs on one rank's share b, as one unit (the output unit's kind: it stays with the output
// layer under a balanced split), unscaled; zero costs for a model without them. Its other_params hold the
// embedding's copy (mtp_embedding_copy_parameters), to be dropped where the stage holds the embedding.
UnitCosts mtp_unit(const TransformerSetup& setup, const Device& d, double b);
double mtp_embedding_copy_parameters(const TransformerSetup& setup);

// The modules' parameters (layers and projections: all, or those a token passes through) and model FLOPs
// per sample.
double mtp_parameters(const TransformerModel& t, bool active);
double mtp_model_flops_per_sample(const TransformerModel& t);

}  // namespace pipesim::transformer
