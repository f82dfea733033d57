// Golden timeline of ZB-H1 for N=4, m=8, F = I = W = 1 ms, no comm, barrier: the start (ms) of every op
// of the batch on every device, worked out by hand from the lists and the engine's rules (each device
// runs its list in order, an op starts as soon as its inputs are there, and an input produced at t is
// usable at t).
//
// The lists (stage i, 1-based: N-i+1 warm-up F, then I_k, W_{k-(i-1)}, F per microbatch k):
//   stage 1: F0 F1 F2 F3 | I0 W0 F4 | I1 W1 F5 | I2 W2 F6 | I3 W3 F7 | I4 W4 | I5 W5 | I6 W6 | I7 W7
//   stage 2: F0 F1 F2 | I0 F3 | I1 W0 F4 | I2 W1 F5 | I3 W2 F6 | I4 W3 F7 | I5 W4 | I6 W5 | I7 W6 | W7
//   stage 3: F0 F1 | I0 F2 | I1 F3 | I2 W0 F4 | I3 W1 F5 | I4 W2 F6 | I5 W3 F7 | I6 W4 | I7 W5 | W6 W7
//   stage 4: F0 | I0 F1 | I1 F2 | I2 F3 | I3 W0 F4 | I4 W1 F5 | I5 W2 F6 | I6 W3 F7 | I7 W4 | W5 W6 W7
//
// Derivation, in time order:
// - Warm-up: stage s runs F_j at (s-1)+j while it has warm-up forwards (stage 1's are back to back).
// - Stage 4: F0@3, I0@4, F1@5 (stage 3's F1 ended at 4), I1@6. Stage 3's I0 waits for stage 4's I0 (ends
//   5): I0@5, then F2@6 (stage 2's F2 ended at 4), so stage 4 runs F2@7, I2@8. Stage 3: I1@7 (stage 4's I1
//   ended at 7), F3@8 once stage 2 has run it: stage 2's I0@6 (after stage 3's I0), F3@7 (stage 1's F3 ended
//   at 4). Stage 4's F3@9: stage 3's F3 and stage 4's own I2 both end at 9, and that is allowed at once.
// - Stage 1 waits for its first gradient: stage 2's I0 ends at 7, so I0@7, W0@8, F4@9; stage 2 runs
//   I1@8 (stage 3's I1 ended at 8), W0@9, F4@10 (stage 1's F4 ended at 10).
// - From then on every stage repeats I, W, F with period 3; a stage that is ready early waits for the F
//   from above or the gradient from below, e.g. stage 3: I2@9, W0@10, F4@11, I3@12, W1@13, F5@14.
// - Drain: stage 4's last F7@21 and I7@22, then its 4 deferred W's at 23..26; each stage above runs I7 one
//   unit after the stage below (stage 3 @23, stage 2 @24, stage 1 @25) and fills the rest with its W's,
//   so all four devices end at 27 and U (barrier) runs at 27 everywhere.
// Stage 1's span is 27 = 8 * 3 + 3: a bubble of 3 = (N-1)(F+I-W).
#include <gtest/gtest.h>

#include "tests/schedules/schedule_runs.h"

namespace pipesim {
namespace {

using test::timeline;

TEST(ZbH1Golden, FourStagesEightMicrobatches) {
  const RunTrace trace = test::run_schedule_plan(
      "zb-h1", 4, 8, /*batches=*/1, test::UniformStageCosts::ms(1, 1, 1), {}, OptimizerSync::kBarrier);

  const std::vector<std::vector<std::string>> expected = {
      {"F0@0",  "F1@1",  "F2@2",  "F3@3",  "I0@7",  "W0@8",  "F4@9",  "I1@10", "W1@11",
       "F5@12", "I2@13", "W2@14", "F6@15", "I3@16", "W3@17", "F7@18", "I4@19", "W4@20",
       "I5@21", "W5@22", "I6@23", "W6@24", "I7@25", "W7@26", "U@27"},
      {"F0@1",  "F1@2",  "F2@3",  "I0@6",  "F3@7",  "I1@8",  "W0@9",  "F4@10", "I2@11",
       "W1@12", "F5@13", "I3@14", "W2@15", "F6@16", "I4@17", "W3@18", "F7@19", "I5@20",
       "W4@21", "I6@22", "W5@23", "I7@24", "W6@25", "W7@26", "U@27"},
      {"F0@2",  "F1@3",  "I0@5",  "F2@6",  "I1@7",  "F3@8",  "I2@9",  "W0@10", "F4@11",
       "I3@12", "W1@13", "F5@14", "I4@15", "W2@16", "F6@17", "I5@18", "W3@19", "F7@20",
       "I6@21", "W4@22", "I7@23", "W5@24", "W6@25", "W7@26", "U@27"},
      {"F0@3",  "I0@4",  "F1@5",  "I1@6",  "F2@7",  "I2@8",  "F3@9",  "I3@10", "W0@11",
       "F4@12", "I4@13", "W1@14", "F5@15", "I5@16", "W2@17", "F6@18", "I6@19", "W3@20",
       "F7@21", "I7@22", "W4@23", "W5@24", "W6@25", "W7@26", "U@27"},
  };
  for (int d = 0; d < 4; ++d) EXPECT_EQ(timeline(trace, d), expected[d]) << "stage " << d + 1;
  EXPECT_EQ(trace.makespan_ns, ms_to_ns(27));
  // Stage 1's bubble: its span less its 24 ms of work.
  EXPECT_EQ(trace.makespan_ns - ms_to_ns(24), ms_to_ns(3));
}

}  // namespace
}  // namespace pipesim
