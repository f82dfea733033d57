// The collectives' closed forms worked by hand, and where a job's groups sit.
#include "cost_models/transformer/collectives.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <set>

#include "cost_models/transformer/job_topology.h"

namespace pipesim {
namespace {

// 100 GB/s (100 bytes per ns) and 10 us.
const LinkSpec kLink{.bandwidth_gb_per_s = 100, .latency_us = 10, .source = "test", .collectives = nullptr};

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
  EXPECT_NEAR(
      all_reduce_seconds(1e9, 1 << 20,
                         {.bandwidth_gb_per_s = 100, .latency_us = 0, .source = "", .collectives = nullptr}),
      0.02, 1e-7);
  EXPECT_EQ(all_reduce_seconds(1e9, 1, kLink), 0);
  EXPECT_EQ(reduce_scatter_seconds(1e9, 1, kLink), 0);
  EXPECT_NEAR(all_reduce_seconds(0, 4, kLink), 6 * 10e-6, 1e-15);  // latency only
}

// A measured curve: 10 GB/s at 1 MB, 100 GB/s at 100 MB, on 8 ranks.
LinkSpec measured_link(double gather_scatter_share = 1) {
  auto curve = std::make_shared<CollectiveCurve>();
  curve->ranks = 8;
  curve->bytes = {1e6, 1e8};
  curve->bus_gb_per_s = {10, 100};
  curve->gather_scatter_share = gather_scatter_share;
  LinkSpec link = kLink;
  link.collectives = curve;
  return link;
}

TEST(Collectives, AMeasuredCurveSetsTheRingsBusBandwidthBySize) {
  const LinkSpec link = measured_link();
  // At a measured point: 2 (p - 1) / p · n / bus, the link's own bandwidth and latency unused.
  EXPECT_NEAR(all_reduce_seconds(1e8, 8, link), 2 * 7.0 / 8 * 1e8 / 100e9, 1e-15);
  EXPECT_NEAR(all_reduce_seconds(1e6, 8, link), 2 * 7.0 / 8 * 1e6 / 10e9, 1e-15);
  // Halfway in log(size) between the points: halfway in log(bus bandwidth), sqrt(10 x 100) GB/s.
  EXPECT_NEAR(all_reduce_seconds(1e7, 8, link), 2 * 7.0 / 8 * 1e7 / (std::sqrt(1000.0) * 1e9), 1e-15);
  // Above the curve its last rate; below it the first point's time holds (latency-bound).
  EXPECT_NEAR(all_reduce_seconds(1e10, 8, link), 2 * 7.0 / 8 * 1e10 / 100e9, 1e-12);
  EXPECT_NEAR(all_reduce_seconds(1e3, 8, link), all_reduce_seconds(1e6, 8, link), 1e-15);
  // Another group reads the curve at the same bytes per rank: 4 ranks of 50 MB as 8 of 100 MB.
  EXPECT_NEAR(all_reduce_seconds(5e7, 4, link), 2 * 3.0 / 4 * 5e7 / 100e9, 1e-15);
  // Reduce-scatter and all-gather: one pass, at the curve's share for them.
  EXPECT_NEAR(reduce_scatter_seconds(1e8, 8, link), 7.0 / 8 * 1e8 / 100e9, 1e-15);
  const LinkSpec shared = measured_link(0.5);
  EXPECT_NEAR(all_gather_seconds(1e8, 8, shared), 7.0 / 8 * 1e8 / 50e9, 1e-15);
  EXPECT_NEAR(all_reduce_seconds(1e8, 8, shared), all_reduce_seconds(1e8, 8, link), 1e-15);
  EXPECT_EQ(all_reduce_seconds(1e8, 1, link), 0);
  EXPECT_EQ(all_reduce_seconds(0, 8, link), 0);
  // The rate grows slower than the size (x 10 over x 100): the time never falls as the buffer grows.
  double before = 0;
  for (double n = 1; n < 1e12; n *= 1.7) {
    const double t = all_reduce_seconds(n, 8, link);
    EXPECT_GE(t, before * (1 - 1e-12)) << n;
    before = t;
  }
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
  EXPECT_THROW(all_reduce_seconds(
                   1, 2, {.bandwidth_gb_per_s = 0, .latency_us = 1, .source = "", .collectives = nullptr}),
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
