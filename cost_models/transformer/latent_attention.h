#pragma once
// The attention half of a layer with multi-head latent attention (spec/latent_attention.h), per microbatch
// of b samples of s tokens (T = s·b), hidden h, a heads, the query latent r_q (0: none), the key/value
// latent r_kv, each head's query/key width d_q = d_nope + d_rope and value width d_v, on one rank of t
// tensor-parallel ranks (Megatron's MLASelfAttention: the down projections duplicated on every rank, the up
// projections column-parallel, the output projection row-parallel):
//   GEMMs     q down T x r_q x h and q up T x a·d_q/t x r_q (or q T x a·d_q/t x h when r_q = 0), kv down
//             T x (r_kv + d_rope) x h, kv up T x a·(d_nope + d_v)/t x r_kv, the scores (s x s x d_q) and the
//             context (s x d_v x s) per head, the projection T x h x a·d_v/t; the down projections over
//             T/t tokens with sequence parallelism (each rank its own, the latents gathered), over all T
//             without (every rank repeats them)
//   params    h·r_q + r_q·a·d_q (or h·a·d_q) + h·(r_kv + d_rope) + r_kv·a·(d_nope + d_v) + a·d_v·h
//   bytes     per token, 16-bit units: norm and down-projection input 2h + 2h, the latents before and after
//             their norms 4 r_q + 4 r_kv + 2 d_rope, Q and K 2 a·d_q each, V and the context 2 a·d_v each
//             (flash attention's inputs and output) and its fp32 statistics; the latents / t with sequence
//             parallelism, the heads' tensors / t
// The tensor-parallel collectives stay those of a dense layer (tokens x h each way): with sequence
// parallelism Megatron gathers the narrower latents instead of the hidden state, a saving not modelled.
#include "cost_models/transformer/memory_bytes.h"
#include "cost_models/transformer/optimizer_work.h"
#include "cost_models/transformer/shapes_flops.h"
#include "spec/transformer_model.h"

namespace pipesim::transformer {

LayerShapes latent_attention_shapes(const TransformerModel& t, double b, int tp, bool sp);
double latent_attention_parameters(const TransformerModel& t);
// One tensor-parallel rank's share: the down projections whole, the rest / t.
double latent_attention_rank_parameters(const TransformerModel& t, int tp);
HalfBytes latent_attention_bytes(const TransformerModel& t, double b, int tp, bool sp);
double latent_attention_weight_grad_activation_bytes(const TransformerModel& t, double b, int tp, bool sp);
Kernels latent_attention_kernels(const TransformerModel& t);
MatrixShapes latent_attention_matrices(const TransformerModel& t);
// The keys' and values' width per token over every head, a·d_q + a·d_v: what ring attention passes.
double latent_key_value_width(const TransformerModel& t);

}  // namespace pipesim::transformer
