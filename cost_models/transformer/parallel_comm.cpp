#include "cost_models/transformer/parallel_comm.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/errors.h"
#include "cost_models/transformer/collectives.h"
#include "cost_models/transformer/job_topology.h"
#include "cost_models/transformer/latent_attention.h"
#include "cost_models/transformer/moe_layer.h"
#include "cost_models/transformer/shapes_flops.h"

namespace pipesim {
namespace transformer {
namespace {

// The link a parallel group's collectives run on: the profile's intra-node link when every group along the
// dimension lies inside a node, else its inter-node link.
ParallelDegrees job_degrees(const ParallelConfig& p, int stages) {
  return {.tensor = p.tensor, .context = p.context, .data = p.data, .pipeline = std::max(1, stages)};
}

RankOrder job_rank_order(const ParallelConfig& p) {
  return p.pipeline_before_data ? RankOrder::kTensorContextPipelineData
                                : RankOrder::kTensorContextDataPipeline;
}

const char* dimension_key(ParallelDimension dimension) {
  switch (dimension) {
    case ParallelDimension::kTensor:
      return "tensor";
    case ParallelDimension::kContext:
      return "context";
    case ParallelDimension::kData:
      return "data";
    case ParallelDimension::kPipeline:
      return "pipeline";
  }
  return "data";
}

LinkSpec group_link(const TransformerSetup& setup, ParallelDimension dimension, int stages,
                    int ranks_per_node) {
  const ParallelConfig& p = setup.parallel;
  const ParallelDegrees degrees = job_degrees(p, stages);
  const RankOrder order = job_rank_order(p);
  const char* name = dimension_key(dimension);
  if (group_within_node(dimension, degrees, order, p.gpus_per_node)) {
    if (!setup.profile.link) {
      throw InputError(
          fmt::format("parallel.{} > 1: hardware profile '{}' has no link (between GPUs of a node)", name,
                      setup.profile.name));
    }
    LinkSpec link = *setup.profile.link;
    link.collectives = setup.profile.intra_node_collectives;
    return link;
  }
  if (!setup.profile.inter_node_link) {
    throw InputError(fmt::format(
        "parallel.{}: its groups span nodes of {} GPUs ({} order), and hardware profile '{}' has no "
        "inter_node_link",
        name, p.gpus_per_node, rank_order_name(order), setup.profile.name));
  }
  return spanning_link(setup.profile, ranks_per_node);
}

LinkSpec group_link(const TransformerSetup& setup, ParallelDimension dimension, int stages) {
  const ParallelConfig& p = setup.parallel;
  return group_link(
      setup, dimension, stages,
      group_ranks_per_node(dimension, job_degrees(p, stages), job_rank_order(p), p.gpus_per_node));
}

}  // namespace

LinkSpec spanning_link(const HardwareProfile& profile, int ranks_per_node) {
  LinkSpec link = *profile.inter_node_link;
  if (ranks_per_node > 1 && profile.link) {
    link.bandwidth_gb_per_s =
        std::min(profile.link->bandwidth_gb_per_s, ranks_per_node * link.bandwidth_gb_per_s);
  }
  return link;
}

int weight_replica_ranks_per_node(const TransformerSetup& setup, int stages) {
  const ParallelConfig& p = setup.parallel;
  const ParallelDegrees degrees = job_degrees(p, stages);
  const RankOrder order = job_rank_order(p);
  return group_ranks_per_node(ParallelDimension::kData, degrees, order, p.gpus_per_node) *
         group_ranks_per_node(ParallelDimension::kContext, degrees, order, p.gpus_per_node);
}

bool weight_replicas_span_nodes(const TransformerSetup& setup, int stages) {
  const ParallelConfig& p = setup.parallel;
  const ParallelDegrees degrees = job_degrees(p, stages);
  const RankOrder order = job_rank_order(p);
  return !group_within_node(ParallelDimension::kData, degrees, order, p.gpus_per_node) ||
         !group_within_node(ParallelDimension::kContext, degrees, order, p.gpus_per_node);
}

LinkSpec weight_replica_link(const TransformerSetup& setup, int stages) {
  const ParallelConfig& p = setup.parallel;
  const bool data_inside =
      group_within_node(ParallelDimension::kData, job_degrees(p, stages), job_rank_order(p), p.gpus_per_node);
  // Data inside: the context groups decide; data across nodes: the inter-node link either way, shared by the
  // replicas each node holds.
  return group_link(setup,
                    data_inside && p.context > 1 ? ParallelDimension::kContext : ParallelDimension::kData,
                    stages, weight_replica_ranks_per_node(setup, stages));
}

// One all-reduce over the tensor-parallel group (or a reduce-scatter plus an all-gather: the same ring time).
double tensor_all_reduce_seconds(const TransformerSetup& setup, double bytes) {
  if (setup.parallel.tensor <= 1) return 0;
  return all_reduce_seconds(bytes, setup.parallel.tensor, group_link(setup, ParallelDimension::kTensor, 1));
}

double exposed_tensor_comm_seconds(const ParallelConfig& parallel, double comm_s, double gemm_s) {
  if (!parallel.overlap_tensor_comm || parallel.tensor <= 1) return comm_s;
  return std::max(comm_s / parallel.tensor, comm_s - gemm_s);
}

double rank_microbatch(const TransformerSetup& setup, double b) {
  return b / std::max(1, setup.parallel.context);
}

TensorParallelSeconds tensor_collective_seconds(const TransformerSetup& setup, double b_rank) {
  const ParallelConfig& p = setup.parallel;
  if (p.tensor <= 1) return {};
  const double bytes = setup.model.seq_len * b_rank * setup.model.hidden * dtype_bytes(setup.model.dtype);
  const double one =
      tensor_all_reduce_seconds(setup, bytes);  // == reduce-scatter + all-gather (sequence parallel)
  return {2 * one, (setup.model.recompute == Recompute::kFull ? 4 : 2) * one};
}

// The ring's exposed time per layer for one rank's share b_rank (see ParallelConfig in the header).
TensorParallelSeconds ring_attention_seconds(const TransformerSetup& setup, const Device& d, double b_rank,
                                             int stages) {
  const ParallelConfig& p = setup.parallel;
  if (p.context <= 1) return {};
  const TransformerModel& t = setup.model;
  if (const std::string needed = context_parallel_requirement(t, p.context); !needed.empty()) {
    throw InputError(fmt::format("parallel.context {}: expected {}", p.context, needed));
  }
  // Point to point, not a collective: each rank's block crosses one NIC (no rings to split it over).
  const LinkSpec link = group_link(setup, ParallelDimension::kContext, stages, 1);
  // K and V of every key/value head (latent attention: the up projections' full heads, not the latents).
  const double kv_width = t.mla.any() ? latent_key_value_width(t) : 2 * t.key_value_width();
  const double kv_bytes = t.seq_len * b_rank * (kv_width / p.tensor) * d.bytes;
  const auto step_s = [&](double bytes) {
    return bytes / (link.bandwidth_gb_per_s * 1e9) + link.latency_us * 1e-6;
  };
  // Each ring step's transfer hides under one of the c blocks of the core attention.
  const LayerShapes shapes = attention_shapes(t, b_rank, p.tensor, p.sequence_parallel);
  const auto core_s = [&](const std::vector<Gemm>& gemms) {
    double seconds = 0;
    for (const Gemm& g : gemms) {
      if (g.flash_work > 0) seconds += gemm_seconds(d.forward, {g}, d.attention_flops_per_s);
    }
    return seconds;
  };
  const int steps = p.context - 1;
  const double forward = steps * std::max(0.0, step_s(kv_bytes) - core_s(shapes.forward) / p.context);
  double backward = steps * std::max(0.0, step_s(2 * kv_bytes) - core_s(shapes.backward_input) / p.context);
  if (t.recompute == Recompute::kFull) backward += forward;  // the rerun forward passes the ring again
  return {forward, backward};
}

int expert_group_ranks_per_node(const TransformerSetup& setup, int /*stages*/) {
  // Expert ranks are numbered expert-tensor innermost: an expert-parallel group's ranks are u apart.
  const ParallelConfig& p = setup.parallel;
  const int stride = p.expert_tensor_size();
  if (stride >= p.gpus_per_node) return 1;
  return std::max(1, std::min(p.expert, p.gpus_per_node / stride));
}

TensorParallelSeconds expert_all_to_all_seconds(const TransformerSetup& setup, double b_rank, int stages) {
  const ParallelConfig& p = setup.parallel;
  const TransformerModel& t = setup.model;
  if (const std::string needed = expert_parallel_requirement(t, p); !needed.empty())
    throw InputError(fmt::format("parallel.expert {}: expected {}", p.expert, needed));
  if (p.expert <= 1) return {};
  const int q = expert_group_ranks_per_node(setup, stages);
  if (q > 1 && !setup.profile.link) {
    throw InputError(
        fmt::format("parallel.expert > 1: hardware profile '{}' has no link (between GPUs of a node)",
                    setup.profile.name));
  }
  if (q < p.expert && !setup.profile.inter_node_link) {
    throw InputError(
        fmt::format("parallel.expert {}: its groups span nodes of {} GPUs, and hardware profile '{}' has no "
                    "inter_node_link",
                    p.expert, p.gpus_per_node, setup.profile.name));
  }
  const LinkSpec* intra = setup.profile.link ? &*setup.profile.link : nullptr;
  const LinkSpec* inter = setup.profile.inter_node_link ? &*setup.profile.inter_node_link : nullptr;
  // The most loaded rank receives L times the mean: it sets the all-to-all's pace.
  const double bytes = moe_dispatch_bytes(t, b_rank, p.tensor);
  double exchange = all_to_all_seconds(bytes, p.expert, q, intra, inter);
  if (p.deepep_dispatch && q < p.expert) {
    // DeepEP: each token once to every other node holding one of its experts, over the NIC; there it and
    // the copies for this node's other ranks move over NVLink.
    const int nodes = p.expert / q;
    const double token_bytes = bytes / t.moe.experts_per_token;
    const double inter_bytes =
        token_bytes * deepep_remote_nodes_per_token(t.moe.experts, t.moe.experts_per_token, nodes);
    const double intra_bytes =
        bytes * (q - 1.0) / p.expert + bytes * (p.expert - q) / p.expert * (q - 1.0) / q;
    exchange = two_level_exchange_seconds(intra_bytes, inter_bytes, intra, inter);
  }
  const double one = t.moe.routed_load() * exchange;
  return {2 * one, (t.recompute == Recompute::kFull ? 4 : 2) * one};
}

TensorParallelSeconds moe_tensor_collective_seconds(const TransformerSetup& setup, double b_rank) {
  const TransformerModel& t = setup.model;
  const int u = setup.parallel.expert_tensor_size();
  if (u <= 1) return {};
  const double copies = expert_layout(setup).copies(t, t.seq_len * b_rank);
  // The expert-tensor group is u consecutive ranks, inside the tensor group's node when u <= t.
  const double one = all_reduce_seconds(copies * t.hidden * dtype_bytes(t.dtype), u,
                                        group_link(setup, ParallelDimension::kTensor, 1));
  return {one, (t.recompute == Recompute::kFull ? 2 : 1) * one};
}

TransformerSetup expert_replica_setup(const TransformerSetup& setup) {
  const ParallelConfig& p = setup.parallel;
  TransformerSetup experts = setup;
  experts.parallel.tensor = p.expert_tensor_size() * p.expert;
  experts.parallel.context = 1;
  experts.parallel.data = p.expert_weight_replicas();
  experts.parallel.expert = 1;
  experts.parallel.expert_tensor = 0;
  return experts;
}

}  // namespace transformer

using transformer::Device;
using transformer::rank_microbatch;
using transformer::ring_attention_seconds;
using transformer::tensor_collective_seconds;
using transformer::weight_replica_link;

std::string context_parallel_requirement(const TransformerModel& model, int context) {
  if (context < 1) return "a positive degree";
  if (context == 1) return "";
  if (model.attention != AttentionKind::kFlash) {
    return "1 with attention: eager (ring attention runs fused, flash kernels; set attention: flash)";
  }
  if (model.seq_len % (2 * context) != 0) {
    return fmt::format("c with 2c dividing model.seq_len ({}: two chunks per rank)", model.seq_len);
  }
  return "";
}

std::string expert_parallel_requirement(const TransformerModel& model, const ParallelConfig& p) {
  if (p.expert < 1) return "a positive degree";
  if (p.expert_tensor < 0) return "a positive expert_tensor degree (or 0: the tensor degree)";
  if (p.expert == 1 && p.expert_tensor_size() == p.tensor) return "";
  if (!model.moe.any())
    return "1 for a dense model (expert parallelism splits a mixture of experts' routed experts: model.moe)";
  if (model.moe.experts % p.expert != 0)
    return fmt::format("a divisor of model.moe.experts ({}: each rank holds the same number)",
                       model.moe.experts);
  const int ranks = p.tensor * p.context * p.data, folded = p.expert * p.expert_tensor_size();
  if (ranks % folded != 0)
    return fmt::format(
        "e x expert_tensor ({} x {}) dividing a stage's tensor x context x data ranks ({}): the experts' "
        "groups are those ranks regrouped",
        p.expert, p.expert_tensor_size(), ranks);
  return "";
}

TensorParallelSeconds tensor_parallel_layer_seconds(const TransformerSetup& setup, double b, int /*stages*/) {
  return tensor_collective_seconds(setup, rank_microbatch(setup, b));
}

TensorParallelSeconds context_parallel_layer_seconds(const TransformerSetup& setup, double b, int stages) {
  return ring_attention_seconds(setup, Device(setup), rank_microbatch(setup, b), stages);
}

double data_parallel_reduce_seconds(const TransformerSetup& setup, double weight_bytes, int stages) {
  const ParallelConfig& p = setup.parallel;
  const int ranks = p.weight_replicas();
  if (ranks <= 1) return 0;
  const LinkSpec link = weight_replica_link(setup, stages);
  const double gradient_bytes =
      p.gradient_reduce_dtype.empty()
          ? weight_bytes
          : weight_bytes * dtype_bytes(p.gradient_reduce_dtype) / dtype_bytes(setup.model.dtype);
  // Without ZeRO an all-reduce; with ZeRO 1 or 2 a reduce-scatter of the gradients and an all-gather of the
  // updated weights; ZeRO-3 keeps its shard (each F and I gathers the weights it needs): the reduce-scatter.
  if (p.zero >= 3) return reduce_scatter_seconds(gradient_bytes, ranks, link);
  return p.zero >= 1 ? reduce_scatter_seconds(gradient_bytes, ranks, link) +
                           all_gather_seconds(weight_bytes, ranks, link)
                     : all_reduce_seconds(gradient_bytes, ranks, link);
}

double expert_data_parallel_reduce_seconds(const TransformerSetup& setup, double expert_weight_bytes,
                                           int stages) {
  if (expert_weight_bytes <= 0) return 0;
  return data_parallel_reduce_seconds(transformer::expert_replica_setup(setup), expert_weight_bytes, stages);
}

double transfer_seconds(const HardwareProfile& profile, double bytes) {
  const std::optional<LinkSpec> link = profile.stage_link();
  if (!link) return 0;
  return bytes / (link->bandwidth_gb_per_s * 1e9) + link->latency_us * 1e-6;
}

}  // namespace pipesim
