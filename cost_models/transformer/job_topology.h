#pragma once
// Where a 3D-parallel job's ranks sit: rank r's coordinates along tensor (t), context (c), data (d) and
// pipeline (p) parallelism, and whether a group of ranks that differ along one dimension fits in one node
// (its collectives then run on the intra-node link) or spans nodes (the inter-node link). Ranks are numbered
// innermost dimension first, as Megatron-LM orders its groups ("tp-cp-ep-dp-pp" by default: tensor
// innermost, so a tensor group is t consecutive ranks and lands in one node when t divides the GPUs per
// node); the other order puts pipeline before data.
#include <array>
#include <string>

namespace pipesim {

enum class ParallelDimension { kTensor, kContext, kData, kPipeline };

struct ParallelDegrees {
  int tensor = 1;
  int context = 1;
  int data = 1;
  int pipeline = 1;
  int gpus() const { return tensor * context * data * pipeline; }
  int of(ParallelDimension dimension) const;
};

// Innermost first after tensor and context: data then pipeline (Megatron's default), or pipeline then data.
enum class RankOrder { kTensorContextDataPipeline, kTensorContextPipelineData };
std::string rank_order_name(RankOrder order);  // "tp-cp-dp-pp" or "tp-cp-pp-dp"

struct RankCoordinates {
  int tensor = 0;
  int context = 0;
  int data = 0;
  int pipeline = 0;
};

RankCoordinates rank_coordinates(int rank, const ParallelDegrees& degrees, RankOrder order);
int rank_at(const RankCoordinates& at, const ParallelDegrees& degrees, RankOrder order);

// The ranks of a group along `dimension` are evenly spaced by this stride (1 for tensor).
int group_stride(ParallelDimension dimension, const ParallelDegrees& degrees, RankOrder order);
// How many ranks of one group along `dimension` a node of `gpus_per_node` consecutive ranks holds: 1 when the
// group's stride fills a node, else up to gpus_per_node / stride (the group's size at most).
int group_ranks_per_node(ParallelDimension dimension, const ParallelDegrees& degrees, RankOrder order,
                         int gpus_per_node);
// Whether every group along `dimension` lies inside one node of `gpus_per_node` consecutive ranks.
bool group_within_node(ParallelDimension dimension, const ParallelDegrees& degrees, RankOrder order,
                       int gpus_per_node);

}  // namespace pipesim
