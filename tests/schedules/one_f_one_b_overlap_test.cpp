// 1F1B with fused steady pairs (schedules/one_f_one_b_overlap.cpp): its lists, a golden timeline worked by
// hand with a slot shorter than F + B, every m running to the end, and the extra warm-up forward's memory.
#include <gtest/gtest.h>

#include "tests/schedules/schedule_runs.h"
#include "tests/sim/plans.h"

namespace pipesim {
namespace {

using test::timeline;

// N = 2, m = 4: device 1 warms up with two forwards (1F1B: one), then fuses F2 with B0 and F3 with B1;
// the last device fuses F1 with B0, F2 with B1, F3 with B2 (never one microbatch twice).
TEST(OneFOneBOverlap, ListsFuseEachSteadyForwardWithABackward) {
  const test::PreparedSchedule p = test::prepare_schedule(test::ScheduleRunSpec("1f1b-overlap", 2, 4, 1));
  const auto& schedule = dynamic_cast<const StaticSchedule&>(*p.schedule);
  const DeviceActionLists lists = schedule.batch_actions(p.spec, test::UniformStageCosts::ms(1, 2));
  const auto text = [](const ActionList& list) {
    std::string s;
    for (const Action& a : list)
      s += fmt::format("{}{}{} ", op_letter(a.kind), a.microbatch, a.fused_with_next ? "+" : "");
    return s;
  };
  EXPECT_EQ(text(lists[0]), "F0 F1 F2+ B0 F3+ B1 B2 B3 ");
  EXPECT_EQ(text(lists[1]), "F0 F1+ B0 F2+ B1 F3+ B2 B3 ");
}

// F = 1 ms, B = 2 ms, a fused slot 1.5 ms (the forward hidden under the backward and half the backward's
// communication under the forward), split 0.5 : 1 between its F and its B; no comm latency. By hand:
// device 2 runs F0 at 1 and its first slot at 2 (F1's input arrives at 2); device 1's first slot waits
// for B0's gradient (3.5); each slot on one device then waits for the other's, 1.5 ms apart, and the drains
// follow: the last B ends at 11.5, against 1F1B's (m + N - 1)(F + B) = 15.
TEST(OneFOneBOverlap, GoldenTimelineN2M4) {
  const RunTrace trace = test::run_schedule_plan("1f1b-overlap", 2, 4, /*batches=*/1,
                                                 test::UniformStageCosts::ms(1, 2).overlap_fb_ms(1.5));
  EXPECT_EQ(timeline(trace, 0, 0, 4), (std::vector<std::string>{"F0@0", "F1@1", "F2@3.5", "B0@4", "F3@5.5",
                                                                "B1@6", "B2@7.5", "B3@9.5", "U@11.5"}));
  EXPECT_EQ(timeline(trace, 1, 0, 4), (std::vector<std::string>{"F0@1", "F1@2", "B0@2.5", "F2@4", "B1@4.5",
                                                                "F3@6", "B2@6.5", "B3@7.5", "U@11.5"}));
}

// Every m runs to the end (no deadlock), every op once, and with the slot as F + B it holds one more
// microbatch in flight than 1F1B on every device (its extra warm-up forward).
TEST(OneFOneBOverlap, RunsEveryMAndHoldsOneMoreMicrobatch) {
  for (int n : {1, 2, 3, 5}) {
    for (int m = 1; m <= 3 * n + 1; ++m) {
      SCOPED_TRACE(fmt::format("N={} m={}", n, m));
      const test::UniformStageCosts costs = test::UniformStageCosts::ms(1.5, 2.25, 0).bytes(10, 0);
      const RunTrace overlap = test::run_schedule_plan("1f1b-overlap", n, m, 1, costs);
      const RunTrace plain = test::run_schedule_plan("1f1b-flush", n, m, 1, costs);
      EXPECT_EQ(overlap.ops.size(), plain.ops.size());
      for (int d = 0; d < n; ++d) {
        EXPECT_EQ(overlap.peak_activation_bytes[d], std::min(m, n - d + 1) * 10) << "device " << d;
      }
    }
  }
}

}  // namespace
}  // namespace pipesim
