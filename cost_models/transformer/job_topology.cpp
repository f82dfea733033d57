#include "cost_models/transformer/job_topology.h"

#include <algorithm>
#include <stdexcept>

namespace pipesim {

namespace {

// The dimensions innermost first.
std::array<ParallelDimension, 4> order_of(RankOrder order) {
  using enum ParallelDimension;
  return order == RankOrder::kTensorContextDataPipeline ? std::array{kTensor, kContext, kData, kPipeline}
                                                        : std::array{kTensor, kContext, kPipeline, kData};
}

int& coordinate(RankCoordinates& at, ParallelDimension dimension) {
  switch (dimension) {
    case ParallelDimension::kTensor:
      return at.tensor;
    case ParallelDimension::kContext:
      return at.context;
    case ParallelDimension::kData:
      return at.data;
    case ParallelDimension::kPipeline:
      return at.pipeline;
  }
  return at.tensor;
}

void check(const ParallelDegrees& degrees) {
  if (degrees.tensor < 1 || degrees.context < 1 || degrees.data < 1 || degrees.pipeline < 1)
    throw std::invalid_argument("every parallel degree is at least 1");
}

}  // namespace

int ParallelDegrees::of(ParallelDimension dimension) const {
  switch (dimension) {
    case ParallelDimension::kTensor:
      return tensor;
    case ParallelDimension::kContext:
      return context;
    case ParallelDimension::kData:
      return data;
    case ParallelDimension::kPipeline:
      return pipeline;
  }
  return 1;
}

std::string rank_order_name(RankOrder order) {
  return order == RankOrder::kTensorContextDataPipeline ? "tp-cp-dp-pp" : "tp-cp-pp-dp";
}

RankCoordinates rank_coordinates(int rank, const ParallelDegrees& degrees, RankOrder order) {
  check(degrees);
  if (rank < 0 || rank >= degrees.gpus()) throw std::invalid_argument("a rank outside the job");
  RankCoordinates at;
  for (ParallelDimension dimension : order_of(order)) {
    coordinate(at, dimension) = rank % degrees.of(dimension);
    rank /= degrees.of(dimension);
  }
  return at;
}

int rank_at(const RankCoordinates& at, const ParallelDegrees& degrees, RankOrder order) {
  check(degrees);
  int rank = 0;
  int stride = 1;
  RankCoordinates copy = at;
  for (ParallelDimension dimension : order_of(order)) {
    rank += coordinate(copy, dimension) * stride;
    stride *= degrees.of(dimension);
  }
  return rank;
}

int group_stride(ParallelDimension dimension, const ParallelDegrees& degrees, RankOrder order) {
  check(degrees);
  int stride = 1;
  for (ParallelDimension inner : order_of(order)) {
    if (inner == dimension) return stride;
    stride *= degrees.of(inner);
  }
  return stride;
}

int group_ranks_per_node(ParallelDimension dimension, const ParallelDegrees& degrees, RankOrder order,
                         int gpus_per_node) {
  if (gpus_per_node < 1) throw std::invalid_argument("a node holds at least one GPU");
  const int stride = group_stride(dimension, degrees, order);
  if (stride >= gpus_per_node) return 1;
  return std::max(1, std::min(degrees.of(dimension), gpus_per_node / stride));
}

bool group_within_node(ParallelDimension dimension, const ParallelDegrees& degrees, RankOrder order,
                       int gpus_per_node) {
  if (gpus_per_node < 1) throw std::invalid_argument("a node holds at least one GPU");
  const int span = group_stride(dimension, degrees, order) * degrees.of(dimension);  // ranks one group covers
  if (degrees.of(dimension) == 1) return true;
  // Groups tile the ranks in blocks of `span`; a block inside a node needs span <= gpus_per_node and the
  // blocks aligned to the nodes (span divides gpus_per_node).
  return span <= gpus_per_node && gpus_per_node % span == 0;
}

}  // namespace pipesim
