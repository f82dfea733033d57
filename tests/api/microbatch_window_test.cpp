// The engine keeps per-(stage, microbatch) state only for the microbatches in flight
// (sim/engine/microbatch_window.h). The window against a map holding every entry, and the engine's window
// depth per schedule: bounded by the pipeline for 1F1B and the asynchronous schedules, m for GPipe.
#include "sim/engine/microbatch_window.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "tests/test_util.h"

namespace pipesim {
namespace {

struct Cell {
  int value = -1;
};

TEST(MicrobatchWindow, HoldsWhatAMapHoldsUntilEveryStageFinishes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const int stages = std::uniform_int_distribution<int>(1, 5)(rng);
    const int microbatches = std::uniform_int_distribution<int>(1, 200)(rng);
    MicrobatchWindow<Cell> window(stages, Cell{-2});
    std::map<std::pair<int, int>, int> reference;
    std::vector<int> unfinished(microbatches, stages);
    int next_entered = 0;
    int released = 0;
    // Microbatches enter in order, a few at a time; stages finish in random order among the entered ones.
    while (released < microbatches) {
      const int enter = std::min(microbatches, next_entered + std::uniform_int_distribution<int>(0, 12)(rng));
      for (; next_entered < enter; ++next_entered) {
        for (int s = 0; s < stages; ++s) {
          window.at(s, next_entered).value = next_entered * 10 + s;
          reference[{s, next_entered}] = next_entered * 10 + s;
        }
      }
      if (next_entered == released) continue;
      const int mb = std::uniform_int_distribution<int>(released, next_entered - 1)(rng);
      if (unfinished[mb] == 0) continue;
      --unfinished[mb];
      window.stage_finished(mb);
      while (released < microbatches && unfinished[released] == 0) ++released;
      for (int m = 0; m < microbatches; ++m) {
        for (int s = 0; s < stages; ++s) {
          const int expected = m < released ? -2 : m < next_entered ? reference[{s, m}] : -1;
          ASSERT_EQ(window.get(s, m).value, expected) << fmt::format("trial {} stage {} mb {}", trial, s, m);
          ASSERT_EQ(window.released(m), m < released);
        }
      }
      ASSERT_EQ(window.live(), next_entered - released);
    }
    EXPECT_LE(window.live_max(), microbatches);
  }
}

int held_max(const std::string& schedule, int stages, int microbatches) {
  const Scenario scenario = test::scenario_from_yaml(
      fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: 2}}\n"
                  "costs: {{forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1, comm_ms: 0.1}}\n",
                  stages, microbatches));
  SimulationOptions options = test::fixed_batches();
  options.keep_trace = false;
  return test::run_schedule(scenario, schedule, {}, options).trace.microbatches_held_max;
}

TEST(MicrobatchWindow, EngineHoldsTheScheduleInFlightDepthNotTheRun) {
  for (const int m : {8, 64, 512}) {
    EXPECT_EQ(held_max("1f1b-flush", 4, m), 4) << m;
    EXPECT_LE(held_max("zb-h1", 4, m), 8) << m;
    EXPECT_LE(held_max("pipedream", 4, m), 8) << m;
    EXPECT_LE(held_max("paci", 4, m), 8) << m;
    EXPECT_EQ(held_max("gpipe", 4, m), m) << m;  // GPipe holds every microbatch of a batch
  }
}

}  // namespace
}  // namespace pipesim
