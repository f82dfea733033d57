// The engine keeps per-(stage, microbatch) state only for the microbatches in flight
// (sim/engine/microbatch_window.h): the window against a map holding every entry. The engine's window depth
// per schedule is tests/schedules/microbatch_window_test.cpp.
#include "sim/engine/microbatch_window.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <vector>

namespace pipesim {
namespace {

struct MicrobatchWindowCell {
  int value = -1;
};

TEST(MicrobatchWindow, HoldsWhatAMapHoldsUntilEveryStageFinishes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    const int stages = std::uniform_int_distribution<int>(1, 5)(rng);
    const int microbatches = std::uniform_int_distribution<int>(1, 200)(rng);
    MicrobatchWindow<MicrobatchWindowCell> window(stages, MicrobatchWindowCell{-2});
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

}  // namespace
}  // namespace pipesim
