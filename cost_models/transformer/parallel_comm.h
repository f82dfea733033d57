#pragma once
// What the job around the pipeline costs a stage: the tensor-parallel collectives and context-parallel ring
// attention of each layer, the gradient reduction over the weights' replicas, the message to the next stage,
// each on the link its group runs on (job_topology.h, collectives.h).
#include <string>

#include "cost_models/transformer/device.h"
#include "spec/hardware_profile.h"
#include "spec/transformer_model.h"

namespace pipesim {

// Seconds a tensor-parallel group of the setup spends in collectives per layer: forward and input gradient
// (the blocking all-reduces, or reduce-scatter plus all-gather, of tokens x h activations); 0 for t = 1.
struct TensorParallelSeconds {
  double forward = 0;
  double backward_input = 0;
};
TensorParallelSeconds tensor_parallel_layer_seconds(const TransformerSetup& setup, double microbatch_size,
                                                    int pipeline_stages);
// What c context-parallel ranks need of the model, as an "expected ..." text, or empty when it has it: flash
// attention (ring attention runs fused kernels) and 2c dividing the sequence (two chunks per rank, balancing
// the causal work).
std::string context_parallel_requirement(const TransformerModel& model, int context);
// What e expert-parallel ranks need of the model and the job, as an "expected ..." text, or empty when they
// have it: a mixture of experts whose routed experts e divides, and e dividing the data-parallel ranks.
std::string expert_parallel_requirement(const TransformerModel& model, const ParallelConfig& parallel);
// Seconds a context-parallel rank's ring attention exposes per layer (see ParallelConfig): forward and input
// gradient; 0 for c = 1.
TensorParallelSeconds context_parallel_layer_seconds(const TransformerSetup& setup, double microbatch_size,
                                                     int pipeline_stages);
// Seconds one stage's gradient reduction over the d x c ranks holding its weights takes at a step (0 for 1),
// for `weight_bytes` of weights in the model's dtype: the gradients at parallel.gradient_reduce_dtype's size,
// ZeRO 1 and 2's all-gather of the updated weights at the weights'.
double data_parallel_reduce_seconds(const TransformerSetup& setup, double weight_bytes, int pipeline_stages);
// Seconds one stage's expert gradients take to reduce over the d x c / e ranks of the expert-data-parallel
// group (0 for 1), for `expert_weight_bytes` of the stage's routed experts' weights on one rank; as above.
double expert_data_parallel_reduce_seconds(const TransformerSetup& setup, double expert_weight_bytes,
                                           int pipeline_stages);
// Link time of one message of `bytes` over the profile's link (0 when the profile has no link).
double transfer_seconds(const HardwareProfile& profile, double bytes);

namespace transformer {

// The link of the d x c ranks that hold the same weights: inside a node only when both their data-parallel
// and their context-parallel groups are. Across nodes, the link a ring of them runs at (spanning_link).
LinkSpec weight_replica_link(const TransformerSetup& setup, int stages);
// How many of the d x c ranks holding the same weights one node holds (1 when each is on its own node), and
// whether their groups span nodes.
int weight_replica_ranks_per_node(const TransformerSetup& setup, int stages);
bool weight_replicas_span_nodes(const TransformerSetup& setup, int stages);
// A ring over a group that spans nodes, run as NCCL runs it on nodes with a NIC per GPU (rail-optimised): one
// ring per NIC, each crossing the network once per node, so the q ranks of the group a node holds split every
// step's data over their q NICs. A step then moves at q times the inter-node link's bandwidth, up to the
// intra-node link's, with the inter-node latency.
LinkSpec spanning_link(const HardwareProfile& profile, int ranks_per_node);
// One all-reduce over the tensor-parallel group (or a reduce-scatter plus an all-gather: the same ring time).
double tensor_all_reduce_seconds(const TransformerSetup& setup, double bytes);
// What an op's tensor-parallel collectives (comm_s in all) leave exposed beside its weight GEMMs (gemm_s):
// all of them, or with parallel.overlap_tensor_comm max(comm_s / t, comm_s - gemm_s).
double exposed_tensor_comm_seconds(const ParallelConfig& parallel, double comm_s, double gemm_s);
// One context-parallel rank's share of a microbatch of b sequences: its costs are a microbatch of b/c.
double rank_microbatch(const TransformerSetup& setup, double b);
// Per layer, for one rank's share b_rank (already divided by c): the tensor-parallel collectives, and the
// ring attention's exposed time.
TensorParallelSeconds tensor_collective_seconds(const TransformerSetup& setup, double b_rank);
TensorParallelSeconds ring_attention_seconds(const TransformerSetup& setup, const Device& d, double b_rank,
                                             int stages);
// Per MoE layer, for one rank's share b_rank: the expert-parallel all-to-alls (dispatch and combine in the
// forward, their gradients in the input gradient; again in I under full recomputation), at the routed
// load, and the tensor-parallel collectives of the routed copies (T·k·L tokens of h, one all-reduce's
// time each way, as the dense MLP's over T).
TensorParallelSeconds expert_all_to_all_seconds(const TransformerSetup& setup, double b_rank, int stages);
TensorParallelSeconds moe_tensor_collective_seconds(const TransformerSetup& setup, double b_rank);
// The expert-data-parallel group as a job of its own: e·t GPUs a "tensor" group, d / e replicas, so that
// its ranks' stride, its links and its ZeRO shards are those of the experts' replicas.
TransformerSetup expert_replica_setup(const TransformerSetup& setup);
// How many ranks of an expert-parallel group one node holds.
int expert_group_ranks_per_node(const TransformerSetup& setup, int stages);

}  // namespace transformer
}  // namespace pipesim
