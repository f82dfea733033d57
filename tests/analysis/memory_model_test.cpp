// The memory model on hand-made timelines: static parts + weights x live versions + activations, changes at
// one instant counted together, an interleaved device holding all its chunks.
#include "analysis/memory_model.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace pipesim {
namespace {

TEST(MemoryModel, SumsStaticWeightsTimesVersionsAndActivations) {
  RunTrace trace;
  trace.layout = PipelineLayout::linear(2);
  trace.memory = {{{0, 0, 0}, {10, 100, 1}, {20, 300, 2}, {30, 50, 1}},  // device 0: activations
                  {{0, 0, 0}, {15, 200, 1}, {25, 0, 0}}};
  DriftReport drift;
  drift.stages.resize(2);
  drift.stages[0].versions = {{0, 0, 1}, {22, 1, 2}, {40, 1, 1}};  // a stash lives from 22 to 40
  drift.stages[0].weight_versions_max = 2;
  drift.stages[1].versions = {{0, 0, 1}};
  drift.stages[1].weight_versions_max = 1;
  const std::vector<StageStaticMemory> fixed = {{1000, 10, 20, 5}, {500, 1, 2, 3}};
  const MemoryReport m = compute_memory(trace, drift, fixed);
  ASSERT_EQ(m.devices.size(), 2u);
  const DeviceMemory& d0 = m.devices[0];
  EXPECT_EQ(d0.fixed_bytes, 35);
  // t=22: two weight copies (2000) + 35 + 300 activations.
  EXPECT_EQ(d0.peak_bytes, 2335);
  EXPECT_EQ(d0.peak_time_ns, 22);
  EXPECT_EQ(d0.peak_weight_bytes, 2000);
  EXPECT_EQ(d0.peak_activation_bytes, 300);
  EXPECT_EQ(d0.weight_versions_max, 2);
  const std::vector<std::pair<TimeNs, Bytes>> expected = {{0, 1035},  {10, 1135}, {20, 1335},
                                                          {22, 2335}, {30, 2085}, {40, 1085}};
  ASSERT_EQ(d0.timeline.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(d0.timeline[i].time_ns, expected[i].first);
    EXPECT_EQ(d0.timeline[i].total_bytes, expected[i].second);
  }
  EXPECT_EQ(m.devices[1].peak_bytes, 500 + 6 + 200);
  EXPECT_EQ(m.peak_bytes(), 2335);
}

TEST(MemoryModel, ChangesAtOneInstantCountTogether) {
  // At t=10 a stash is dropped (2 -> 1 versions) and activations rise: the device never holds both at once.
  RunTrace trace;
  trace.layout = PipelineLayout::linear(1);
  trace.memory = {{{0, 0, 0}, {10, 700, 1}}};
  DriftReport drift;
  drift.stages.resize(1);
  drift.stages[0].versions = {{0, 0, 2}, {10, 1, 1}};
  const MemoryReport m = compute_memory(trace, drift, {{1000, 0, 0, 0}});
  EXPECT_EQ(m.devices[0].peak_bytes, 2000);
  EXPECT_EQ(m.devices[0].timeline.back().total_bytes, 1700);
}

TEST(MemoryModel, AnInterleavedDeviceHoldsAllItsChunks) {
  RunTrace trace;
  trace.layout = PipelineLayout::interleaved(2, 2);  // device 0: stages 0 and 2
  trace.memory = {{{0, 0, 0}}, {{0, 0, 0}}};
  DriftReport drift;
  drift.stages.resize(4);
  for (auto& s : drift.stages) s.versions = {{0, 0, 1}};
  const MemoryReport m =
      compute_memory(trace, drift, {{1, 10, 100, 0}, {2, 20, 200, 0}, {4, 40, 400, 0}, {8, 0, 0, 0}});
  EXPECT_EQ(m.devices[0].peak_bytes, 1 + 10 + 100 + 4 + 40 + 400);
  EXPECT_EQ(m.devices[1].peak_bytes, 2 + 20 + 200 + 8);
}

}  // namespace
}  // namespace pipesim
