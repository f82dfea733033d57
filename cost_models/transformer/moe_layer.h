#pragma once
// The MLP half of a mixture-of-experts layer (spec/mixture_of_experts.h), per microbatch of b samples of s
// tokens (T = s·b), hidden h, E routed experts of width f_e of which each token takes k, S shared experts,
// on one rank of t tensor, e expert-parallel and u expert-tensor-parallel ranks (spec/transformer_model.h,
// ParallelConfig), under a routed load L (MixtureOfExperts::routed_load: the most loaded rank's tokens over
// the mean):
//   router:   a T x E x h GEMM (replicated over the tensor ranks), softmax and top-k over E fp32 logits
//   routed:   the rank's E/e experts, each a grouped GEMM over its share of A = T·k·L·u/t copies (each
//             tensor rank dispatches its T/t tokens; an expert-tensor group of u gathers u of those shares):
//             the MLP's GEMMs at width f_e / u
//   shared:   the dense MLP at width S·f_e / t over all T tokens
//   params:   h·E + (E + S)·P_mlp(f_e) a layer; active h·E + (k + S)·P_mlp(f_e) (what MFU counts)
//   bytes:    per token the norm's input and output (2h + 2h), the router's fp32 probabilities (4E) and
//             the shared experts' inner activations; per routed copy (A) the permuted input 2h, the
//             expert's inner activations (6 f_e / u SwiGLU, 4 f_e / u GeLU) and its output 2h (the combine
//             weights' gradient needs it); the norm's share / t with sequence parallelism
// Model FLOPs count L = 1: the work a step needs, not what the slowest rank waits for.
#include "cost_models/transformer/memory_bytes.h"
#include "cost_models/transformer/optimizer_work.h"
#include "cost_models/transformer/shapes_flops.h"
#include "spec/transformer_model.h"

namespace pipesim::transformer {

// How one rank holds and runs the routed experts.
struct ExpertLayout {
  int tensor = 1;         // t: the rest of the layer's tensor parallelism
  int expert_tensor = 1;  // u: each expert's width split over u ranks
  int expert = 1;         // e: the experts split over e ranks
  double load = 1;        // L: the most loaded rank's routed tokens over the mean
  // The routed copies one rank computes for its microbatch share of `tokens` (T·k·L·u/t).
  double copies(const TransformerModel& t, double tokens) const;
};
ExpertLayout expert_layout(const TransformerSetup& setup);

// The model as one expert sees it: the MLP at the experts' width.
TransformerModel expert_model(const TransformerModel& t);
int expert_ffn(const TransformerModel& t);

// A MoE layer's MLP parameters: all of them, and those one token passes through.
double moe_mlp_parameters(const TransformerModel& t);
double moe_active_mlp_parameters(const TransformerModel& t);
// One rank's share of a MoE MLP's parameters: the routed experts' (E/e of them, / u), and the rest (the
// router, whole on every rank, and the shared experts / t).
double moe_rank_expert_parameters(const TransformerModel& t, const ExpertLayout& layout);
double moe_rank_other_parameters(const TransformerModel& t, int tp);

// One rank's GEMMs of a MoE MLP (the layout's load; model FLOPs pass load 1).
LayerShapes moe_shapes(const TransformerModel& t, double b, const ExpertLayout& layout);
HalfBytes moe_bytes(const TransformerModel& t, double b, const ExpertLayout& layout, bool sp);
// Each weight GEMM's input and output gradient, held from I to W (as weight_grad_activation_bytes).
double moe_weight_grad_activation_bytes(const TransformerModel& t, double b, const ExpertLayout& layout,
                                        bool sp);
Kernels moe_kernels(const TransformerModel& t);
// Muon's and SOAP's matrices of one rank: its E/e experts, the shared experts and the router.
MatrixShapes moe_matrices(const TransformerModel& t, int ep);
// DeepEP's dispatch: of a token's k experts, spread evenly over the n nodes of an expert-parallel group, the
// other nodes that hold at least one (each receives the token once): (n - 1)(1 - C(E - E/n, k) / C(E, k)),
// the routing taken as uniform.
double deepep_remote_nodes_per_token(int experts, int experts_per_token, int nodes);
// The bytes one rank dispatches in one all-to-all at load 1: its 1/t of the T tokens, k copies of h each
// (sequence parallelism's share, which Megatron requires of a MoE with tensor parallelism).
double moe_dispatch_bytes(const TransformerModel& t, double b, int tp);

}  // namespace pipesim::transformer
