// ZB-V: its op order against PyTorch's generator (ScheduleZBVZeroBubble) on N = 4, m = 8, worked from its
// code; the Interleaved1F1B alias's order and every m it takes. What a scenario's run of them reports (the
// bubble, the steady peaks, a PyTorch name's period) is the api's: tests/api/zb_v_scenario_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "base/errors.h"
#include "schedules/pytorch_csv.h"
#include "schedules/registry.h"
#include "schedules/zb_handcrafted.h"
#include "tests/schedules/schedule_runs.h"

namespace pipesim {
namespace {

// PyTorch's per-rank order for N = 4, m = 8 (traced from torch/distributed/pipelining/schedules.py).
TEST(ZbV, OrderEqualsPyTorchsGeneratorForFourRanksEightMicrobatches) {
  const std::string expected =
      "0F0,0F1,0F2,0F3,0F4,0F5,0F6,7F0,7I0,7W0,7F1,7I1,7W1,7F2,7I2,7W2,7F3,7I3,7W3,0F7,0I0,0W0,7F4,7I4,7W4,"
      "0I1,"
      "0W1,7F5,7I5,7W5,0I2,0W2,7F6,7I6,7W6,0I3,0W3,7F7,7I7,7W7,0I4,0W4,0I5,0W5,0I6,0W6,0I7,0W7\n"
      "1F0,1F1,1F2,1F3,1F4,6F0,1F5,6F1,6I0,6W0,6F2,6I1,6W1,6F3,6I2,6W2,1F6,1I0,1W0,6F4,6I3,6W3,1F7,1I1,1W1,"
      "6F5,"
      "6I4,6W4,1I2,1W2,6F6,6I5,6W5,1I3,1W3,6F7,6I6,6W6,1I4,6I7,1I5,1W4,1I6,1W5,1I7,1W6,6W7,1W7\n"
      "2F0,2F1,2F2,5F0,2F3,5F1,2F4,5F2,5I0,5W0,5F3,5I1,5W1,2F5,2I0,2W0,5F4,5I2,5W2,2F6,2I1,2W1,5F5,5I3,5W3,"
      "2F7,"
      "2I2,2W2,5F6,5I4,5W4,2I3,2W3,5F7,5I5,5W5,2I4,5I6,2I5,5I7,2I6,2W4,2I7,2W5,5W6,5W7,2W6,2W7\n"
      "3F0,4F0,3F1,4F1,3F2,4F2,3F3,4F3,4I0,4W0,3F4,3I0,3W0,4F4,4I1,4W1,3F5,3I1,3W1,4F5,4I2,4W2,3F6,3I2,3W2,"
      "4F6,"
      "4I3,4W3,3F7,3I3,3W3,4F7,4I4,4W4,3I4,4I5,3I5,4I6,3I6,4I7,3I7,3W4,4W5,4W6,4W7,3W5,3W6,3W7\n";
  EXPECT_EQ(format_pytorch_csv(zb_v_lists(4, 8)), expected);
}

// The Interleaved1F1B alias is honest: pipesim's interleaved-1f1b runs PyTorch's per-rank order (its idle
// cells dropped) for N = 4, 2 chunks, m = 8, traced from ScheduleInterleaved1F1B.
TEST(PytorchScheduleNames, Interleaved1F1BOrderEqualsPyTorchs) {
  const std::string expected =
      "0F0,0F1,0F2,0F3,4F0,4F1,4F2,4F3,0F4,0F5,0F6,4B0,0F7,4B1,4F4,4B2,4F5,4B3,4F6,0B0,4F7,0B1,0B2,0B3,4B4,"
      "4B5,"
      "4B6,4B7,0B4,0B5,0B6,0B7\n"
      "1F0,1F1,1F2,1F3,5F0,5F1,5F2,5F3,1F4,5B0,1F5,5B1,1F6,5B2,1F7,5B3,5F4,1B0,5F5,1B1,5F6,1B2,5F7,1B3,5B4,"
      "5B5,"
      "5B6,5B7,1B4,1B5,1B6,1B7\n"
      "2F0,2F1,2F2,2F3,6F0,6F1,6F2,6B0,6F3,6B1,2F4,6B2,2F5,6B3,2F6,2B0,2F7,2B1,6F4,2B2,6F5,2B3,6F6,6B4,6F7,"
      "6B5,"
      "6B6,6B7,2B4,2B5,2B6,2B7\n"
      "3F0,3F1,3F2,3F3,7F0,7B0,7F1,7B1,7F2,7B2,7F3,7B3,3F4,3B0,3F5,3B1,3F6,3B2,3F7,3B3,7F4,7B4,7F5,7B5,7F6,"
      "7B6,"
      "7F7,7B7,3B4,3B5,3B6,3B7\n";
  // A device's F = 1 ms, B = 2 ms, over its two chunks.
  EXPECT_EQ(test::static_order_csv(test::ScheduleRunSpec("Interleaved1F1B", 4, 8).param("chunks", "2"),
                                   test::UniformStageCosts::ms(1, 2).bytes(1'000'000, 0).over_chunks(2)),
            expected);
}

// Like PyTorch's, interleaved-1f1b takes any m that m div N rounds hold equally (every m below 2N): each such
// run finishes (no deadlock) with every op run once; the others are refused.
TEST(PytorchScheduleNames, InterleavedRunsEveryMItsRoundsHold) {
  for (int n : {2, 3, 4, 5}) {
    for (int v : {2, 3}) {
      for (int m = 1; m <= 3 * n; ++m) {
        SCOPED_TRACE(fmt::format("N={} chunks={} m={}", n, v, m));
        // A device's F = 1.5, I = 1, W = 0.5 ms, M_B = 10, M_W = 3, over its chunks; 0.1 ms comm; one batch.
        const test::ScheduleRunSpec run = test::ScheduleRunSpec("interleaved-1f1b", n, m, /*batches=*/1)
                                              .param("chunks", std::to_string(v))
                                              .with_sync(OptimizerSync::kPostValidation)
                                              .comm_ms(0.1);
        const test::UniformStageCosts costs =
            test::UniformStageCosts::ms(1.5, 1, 0.5).bytes(10, 3).over_chunks(v);
        const bool equal_rounds = m % std::max(1, m / n) == 0;
        if (!equal_rounds) {
          EXPECT_THROW(test::run_schedule_plan(run, costs), InputError);
          continue;
        }
        const RunTrace trace = test::run_schedule_plan(run, costs);
        EXPECT_EQ(trace.ops.size(), static_cast<size_t>(n * v * (2 * m + 1)));  // F, B per (stage, mb); U
      }
    }
  }
}

}  // namespace
}  // namespace pipesim
