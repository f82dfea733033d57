#pragma once
// The MLP half of a mixture-of-experts layer (spec/mixture_of_experts.h), per microbatch of b samples of s
// tokens (T = s·b), hidden h, E routed experts of width f_e of which each token takes k, S shared experts,
// on one rank of t tensor and e expert-parallel ranks (spec/transformer_model.h, ParallelConfig), under a
// routed load L (MixtureOfExperts::routed_load: the most loaded rank's tokens over the mean):
//   router:   a T x E x h GEMM (replicated over the tensor ranks), softmax and top-k over E fp32 logits
//   routed:   the rank's E/e experts, each a grouped GEMM over its T·k·L·e/E tokens (T·k·L in all): the MLP's
//             GEMMs at width f_e / t
//   shared:   the dense MLP at width S·f_e / t over all T tokens
//   params:   h·E + (E + S)·P_mlp(f_e) a layer; active h·E + (k + S)·P_mlp(f_e) (what MFU counts)
//   bytes:    per token the norm's input and output (2h + 2h), the router's fp32 probabilities (4E) and
//             the shared experts' inner activations; per routed copy (T·k·L) the permuted input 2h, the
//             expert's inner activations (6 f_e / t SwiGLU, 4 f_e / t GeLU) and its output 2h (the combine
//             weights' gradient needs it); the norm's share / t with sequence parallelism
// Model FLOPs count L = 1: the work a step needs, not what the slowest rank waits for.
#include "cost_models/transformer/memory_bytes.h"
#include "cost_models/transformer/optimizer_work.h"
#include "cost_models/transformer/shapes_flops.h"
#include "spec/transformer_model.h"

namespace pipesim::transformer {

// The model as one expert sees it: the MLP at the experts' width.
TransformerModel expert_model(const TransformerModel& t);
int expert_ffn(const TransformerModel& t);

// A MoE layer's MLP parameters: all of them, and those one token passes through.
double moe_mlp_parameters(const TransformerModel& t);
double moe_active_mlp_parameters(const TransformerModel& t);
// One rank's share of a MoE MLP's parameters: the routed experts' (E/e of them, / t), and the rest (the
// router, whole on every rank, and the shared experts / t).
double moe_rank_expert_parameters(const TransformerModel& t, int tp, int ep);
double moe_rank_other_parameters(const TransformerModel& t, int tp);

// One rank's GEMMs of a MoE MLP at routed load `load`.
LayerShapes moe_shapes(const TransformerModel& t, double b, int tp, int ep, double load);
HalfBytes moe_bytes(const TransformerModel& t, double b, int tp, bool sp, double load);
// Each weight GEMM's input and output gradient, held from I to W (as weight_grad_activation_bytes).
double moe_weight_grad_activation_bytes(const TransformerModel& t, double b, int tp, bool sp, double load);
Kernels moe_kernels(const TransformerModel& t);
// Muon's and SOAP's matrices of one rank: its E/e experts, the shared experts and the router.
MatrixShapes moe_matrices(const TransformerModel& t, int ep);
// The bytes one rank dispatches in one all-to-all at load 1: its 1/t of the T tokens, k copies of h each.
double moe_dispatch_bytes(const TransformerModel& t, double b, int tp);

}  // namespace pipesim::transformer
