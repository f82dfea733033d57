// Placements as data: loop (interleaved), v, wave and explicit lists, and the names reports give them.
#include "sim/layout.h"

#include <gtest/gtest.h>

#include "base/errors.h"

namespace pipesim {
namespace {

TEST(Layout, VHoldsBothEndsOnTheFirstDeviceAndTheMiddleOnTheLast) {
  const PipelineLayout v = PipelineLayout::v_shape(4);
  EXPECT_EQ(v.stages, 8);
  EXPECT_EQ(v.chunks_per_device, 2);
  EXPECT_EQ(v.device_of_stage, (std::vector<int>{0, 1, 2, 3, 3, 2, 1, 0}));
  EXPECT_EQ(v.chunk_of_stage, (std::vector<int>{0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(v.stages_on(0), (std::vector<int>{0, 7}));
  EXPECT_EQ(v.stages_on(3), (std::vector<int>{3, 4}));
  EXPECT_EQ(v.placement_name(), "v");
}

TEST(Layout, WaveZigZagsOverTheDevices) {
  const PipelineLayout wave = PipelineLayout::wave(3, 3);
  EXPECT_EQ(wave.device_of_stage, (std::vector<int>{0, 1, 2, 2, 1, 0, 0, 1, 2}));
  EXPECT_EQ(wave.chunk_of_stage, (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(wave.placement_name(), "wave");
  EXPECT_EQ(PipelineLayout::interleaved(3, 2).placement_name(), "loop");
  EXPECT_EQ(PipelineLayout::linear(5).placement_name(), "loop");
}

TEST(Layout, ExplicitPlacementNumbersEachDevicesChunksInStageOrder) {
  const PipelineLayout layout = PipelineLayout::explicit_placement(2, {1, 0, 0});
  EXPECT_EQ(layout.chunk_of_stage, (std::vector<int>{0, 0, 1}));
  EXPECT_EQ(layout.chunks_per_device, 2);
  EXPECT_EQ(layout.placement_name(), "explicit");
  EXPECT_THROW(PipelineLayout::explicit_placement(2, {0, 0}), InputError);     // device 1 holds nothing
  EXPECT_THROW(PipelineLayout::explicit_placement(2, {0, 1, 2}), InputError);  // no device 2
}

}  // namespace
}  // namespace pipesim
