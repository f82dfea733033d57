// The collectives' closed forms worked by hand, and where a job's groups sit.
#include "cost_models/transformer/collectives.h"

#include <gtest/gtest.h>

#include <set>

#include "cost_models/transformer/job_topology.h"

namespace pipesim {
namespace {

// 100 GB/s (100 bytes per ns) and 10 us.
const LinkSpec kLink{.bandwidth_gb_per_s = 100, .latency_us = 10, .source = "test"};

TEST(Collectives, RingAllReduceIsTwoPMinusOneStepsOfAPthOfTheBuffer) {
  // 8 ranks, 800 MB: each step 10 us + 100 MB / 100 GB/s = 1 ms + 10 us; 14 steps.
  EXPECT_NEAR(all_reduce_seconds(800e6, 8, kLink), 14 * (10e-6 + 1e-3), 1e-12);
  EXPECT_NEAR(reduce_scatter_seconds(800e6, 8, kLink), 7 * (10e-6 + 1e-3), 1e-12);
  EXPECT_NEAR(all_gather_seconds(800e6, 8, kLink), 7 * (10e-6 + 1e-3), 1e-12);
  // All-reduce = reduce-scatter + all-gather, at any p.
  for (int p : {2, 3, 5, 16, 1024})
    EXPECT_NEAR(all_reduce_seconds(1e9, p, kLink),
                reduce_scatter_seconds(1e9, p, kLink) + all_gather_seconds(1e9, p, kLink), 1e-12)
        << p;
  // The bandwidth term tends to 2 n / β as p grows: 2 x 10 ms for 1 GB.
  EXPECT_NEAR(all_reduce_seconds(1e9, 1 << 20, {.bandwidth_gb_per_s = 100, .latency_us = 0, .source = ""}),
              0.02, 1e-7);
  EXPECT_EQ(all_reduce_seconds(1e9, 1, kLink), 0);
  EXPECT_EQ(reduce_scatter_seconds(1e9, 1, kLink), 0);
  EXPECT_NEAR(all_reduce_seconds(0, 4, kLink), 6 * 10e-6, 1e-15);  // latency only
}

TEST(Collectives, TreeAllReducePaysLogPLatencies) {
  // 1024 ranks: 2 x 10 latencies + 2 x 8 ms for 400 MB.
  EXPECT_NEAR(all_reduce_seconds(400e6, 1024, kLink, CollectiveAlgorithm::kTree), 20 * 10e-6 + 8e-3, 1e-12);
  // 5 ranks: ceil(log2 5) = 3 levels.
  EXPECT_NEAR(all_reduce_seconds(0, 5, kLink, CollectiveAlgorithm::kTree), 6 * 10e-6, 1e-15);
  // At scale and for small messages the tree's latency wins over the ring's.
  EXPECT_LT(all_reduce_seconds(1e3, 1024, kLink, CollectiveAlgorithm::kTree),
            all_reduce_seconds(1e3, 1024, kLink));
}

TEST(Collectives, BadInputsAreRefused) {
  EXPECT_THROW(all_reduce_seconds(1, 0, kLink), std::invalid_argument);
  EXPECT_THROW(all_reduce_seconds(-1, 2, kLink), std::invalid_argument);
  EXPECT_THROW(all_reduce_seconds(1, 2, {.bandwidth_gb_per_s = 0, .latency_us = 1, .source = ""}),
               std::invalid_argument);
}

TEST(JobTopology, RanksNumberTensorInnermostAndRoundTrip) {
  const ParallelDegrees degrees{.tensor = 4, .context = 1, .data = 3, .pipeline = 2};
  std::set<int> seen;
  for (RankOrder order : {RankOrder::kTensorContextDataPipeline, RankOrder::kTensorContextPipelineData}) {
    seen.clear();
    for (int r = 0; r < degrees.gpus(); ++r) {
      const RankCoordinates at = rank_coordinates(r, degrees, order);
      EXPECT_EQ(rank_at(at, degrees, order), r);
      seen.insert(rank_at(at, degrees, order));
    }
    EXPECT_EQ(seen.size(), 24U);
  }
  // tp-cp-dp-pp: rank 13 = tensor 1 + 4 x (data 0 + 3 x pipeline 1)... 13 = 1 + 4 * 3: data 0, pipeline 1.
  const RankCoordinates at = rank_coordinates(13, degrees, RankOrder::kTensorContextDataPipeline);
  EXPECT_EQ(at.tensor, 1);
  EXPECT_EQ(at.data, 0);
  EXPECT_EQ(at.pipeline, 1);
  EXPECT_EQ(group_stride(ParallelDimension::kData, degrees, RankOrder::kTensorContextDataPipeline), 4);
  EXPECT_EQ(group_stride(ParallelDimension::kPipeline, degrees, RankOrder::kTensorContextDataPipeline), 12);
  EXPECT_EQ(group_stride(ParallelDimension::kPipeline, degrees, RankOrder::kTensorContextPipelineData), 4);
  EXPECT_EQ(rank_order_name(RankOrder::kTensorContextDataPipeline), "tp-cp-dp-pp");
}

TEST(JobTopology, ATwoNodeJobKeepsTensorGroupsInsideNodes) {
  // 2 nodes of 8: TP 8 inside each node; PP 2 across them.
  const ParallelDegrees tp8_pp2{.tensor = 8, .pipeline = 2};
  const RankOrder order = RankOrder::kTensorContextDataPipeline;
  EXPECT_TRUE(group_within_node(ParallelDimension::kTensor, tp8_pp2, order, 8));
  EXPECT_FALSE(group_within_node(ParallelDimension::kPipeline, tp8_pp2, order, 8));
  // TP 4, DP 2, PP 2: a node holds a whole DP group of TP groups; the pipeline crosses nodes.
  const ParallelDegrees tp4_dp2_pp2{.tensor = 4, .data = 2, .pipeline = 2};
  EXPECT_TRUE(group_within_node(ParallelDimension::kTensor, tp4_dp2_pp2, order, 8));
  EXPECT_TRUE(group_within_node(ParallelDimension::kData, tp4_dp2_pp2, order, 8));
  EXPECT_FALSE(group_within_node(ParallelDimension::kPipeline, tp4_dp2_pp2, order, 8));
  // The other order swaps them: the pipeline inside a node, data across.
  const RankOrder other = RankOrder::kTensorContextPipelineData;
  EXPECT_TRUE(group_within_node(ParallelDimension::kPipeline, tp4_dp2_pp2, other, 8));
  EXPECT_FALSE(group_within_node(ParallelDimension::kData, tp4_dp2_pp2, other, 8));
  // A tensor group that does not divide the node straddles nodes (TP 3 on 8 GPUs per node).
  EXPECT_FALSE(group_within_node(ParallelDimension::kTensor, {.tensor = 3, .data = 8}, order, 8));
  // TP 16 on 8-GPU nodes cannot stay inside one.
  EXPECT_FALSE(group_within_node(ParallelDimension::kTensor, {.tensor = 16}, order, 8));
  // A dimension of degree 1 has nothing to cross.
  EXPECT_TRUE(group_within_node(ParallelDimension::kContext, tp8_pp2, order, 8));
}

TEST(JobTopology, ANodeHoldsTheRanksOfAGroupItsStrideLeavesRoom) {
  const RankOrder order = RankOrder::kTensorContextDataPipeline;
  // TP 8 fills a node of 8: each data-parallel group has one rank per node.
  EXPECT_EQ(group_ranks_per_node(ParallelDimension::kData, {.tensor = 8, .data = 4}, order, 8), 1);
  // TP 2: a node holds 4 ranks of each data-parallel group of 16 (and all 2 of a tensor group).
  EXPECT_EQ(group_ranks_per_node(ParallelDimension::kData, {.tensor = 2, .data = 16}, order, 8), 4);
  EXPECT_EQ(group_ranks_per_node(ParallelDimension::kTensor, {.tensor = 2, .data = 16}, order, 8), 2);
  // No more than the group has: DP 2 with TP 1 on nodes of 8.
  EXPECT_EQ(group_ranks_per_node(ParallelDimension::kData, {.data = 2, .pipeline = 4}, order, 8), 2);
  // The pipeline outermost, stride t x d = 16: one rank per node.
  EXPECT_EQ(
      group_ranks_per_node(ParallelDimension::kPipeline, {.tensor = 2, .data = 8, .pipeline = 4}, order, 8),
      1);
  // The other order puts the pipeline inside: data-parallel ranks 8 apart, one per node.
  EXPECT_EQ(group_ranks_per_node(ParallelDimension::kData, {.tensor = 2, .data = 8, .pipeline = 4},
                                 RankOrder::kTensorContextPipelineData, 8),
            1);
}

}  // namespace
}  // namespace pipesim
