// V-Half and V-Min: the order of the authors' scheduler (zbv_greedy.py, run on the same inputs), the peak
// activations their names promise, and every m running for small N.
#include "schedules/v_building_blocks.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "schedules/pytorch_csv.h"
#include "tests/schedules/schedule_runs.h"

namespace pipesim {
namespace {

// Golden orders printed by the authors' scheduler with unit costs and no comm (stage 2N-1-r is device r's
// chunk 1); 72 cases (N 2-8, m 1 to 3N+1) were compared the same way when it was written.
TEST(VBuildingBlocks, OrderEqualsTheAuthorsScheduler) {
  EXPECT_EQ(
      format_pytorch_csv(v_building_block_lists(VMemory::kHalf, 4, 8)),
      "0F0,0F1,0F2,0F3,0F4,7F0,7I0,7W0,7F1,7I1,7W1,7F2,0I0,7I2,7W2,7F3,0W0,0F5,0I1,7I3,7W3,7F4,0W1,0F6,0I2,"
      "7I4,7W4,7F5,0W2,0F7,0I3,7I5,7W5,7F6,7I6,7W6,0I4,0W3,0W4,7F7,7I7,0I5,7W7,0I6,0W5,0W6,0I7,0W7\n"
      "1F0,1F1,1F2,1F3,6F0,6F1,6I0,6W0,6F2,6I1,6W1,1I0,1W0,1F4,6F3,6I2,6W2,1I1,1W1,1F5,6F4,6I3,6W3,1I2,1W2,"
      "1F6,6F5,6I4,6W4,1I3,1F7,1W3,6F6,6I5,6W5,1I4,6I6,6W6,6F7,1W4,1I5,6I7,1I6,6W7,1W5,1W6,1I7,1W7\n"
      "2F0,2F1,2F2,5F0,5F1,5F2,5I0,5W0,2F3,5I1,2I0,5W1,2W0,5F3,2F4,2I1,5I2,5W2,5F4,2W1,2F5,2I2,5I3,5W3,5F5,"
      "2W2,2F6,2I3,5I4,5W4,5F6,2W3,2F7,2I4,5I5,5W5,5F7,5I6,2I5,5W6,2I6,5I7,5W7,2W4,2I7,2W5,2W6,2W7\n"
      "3F0,4F0,3F1,4F1,3F2,4F2,4I0,4W0,3I0,3W0,3F3,4F3,4I1,4W1,3I1,3W1,3F4,4F4,4I2,4W2,3I2,3W2,3F5,4F5,4I3,"
      "4W3,3I3,3F6,3W3,4F6,4I4,3I4,4W4,3F7,3W4,4F7,4I5,3I5,4I6,3I6,4W5,4W6,4I7,3I7,4W7,3W5,3W6,3W7\n");
  EXPECT_EQ(
      format_pytorch_csv(v_building_block_lists(VMemory::kMin, 4, 8)),
      "0F0,0F1,0F2,7F0,7I0,7W0,7F1,7I1,7W1,0I0,0W0,0F3,7F2,7I2,0I1,7W2,0W1,0F4,7F3,7I3,0I2,7W3,0W2,0F5,7F4,"
      "7I4,0I3,7W4,0W3,0F6,7F5,7I5,0I4,7W5,0W4,0F7,7F6,7I6,0I5,7W6,0W5,7F7,7I7,0I6,7W7,0W6,0I7,0W7\n"
      "1F0,1F1,6F0,6F1,6I0,6W0,1F2,1I0,6I1,6W1,1W0,6F2,1F3,1I1,6I2,6W2,1W1,6F3,1F4,1I2,6I3,6W3,1W2,6F4,1F5,"
      "1I3,6I4,6W4,1W3,6F5,1F6,1I4,6I5,6W5,1W4,6F6,1F7,1I5,6I6,6W6,1W5,6F7,1I6,6I7,6W7,1W6,1I7,1W7\n"
      "2F0,2F1,5F0,5F1,5I0,5W0,2F2,2I0,2W0,5I1,5F2,5W1,2I1,2F3,2W1,5I2,5F3,5W2,2I2,2F4,2W2,5I3,5F4,5W3,2I3,"
      "2F5,2W3,5I4,5F5,5W4,2I4,2F6,2W4,5I5,5F6,5W5,2I5,2F7,2W5,5I6,5F7,5W6,2I6,2W6,5I7,5W7,2I7,2W7\n"
      "3F0,4F0,3F1,4F1,4I0,3I0,4W0,3W0,3F2,4F2,4I1,3I1,4W1,3W1,3F3,4F3,4I2,3I2,4W2,3W2,3F4,4F4,4I3,3I3,4W3,"
      "3W3,3F5,4F5,4I4,3I4,4W4,3W4,3F6,4F6,4I5,3I5,4W5,3W5,3F7,4F7,4I6,3I6,4W6,3W6,4I7,3I7,4W7,3W7\n");
  EXPECT_EQ(
      format_pytorch_csv(v_building_block_lists(VMemory::kHalf, 3, 5)),
      "0F0,0F1,0F2,5F0,5I0,5W0,5F1,5I1,5W1,0I0,0W0,0F3,5F2,5I2,5W2,0I1,0W1,0F4,5F3,5I3,5W3,0I2,0W2,5F4,5I4,"
      "0I3,5W4,0W3,0I4,0W4\n"
      "1F0,1F1,4F0,4F1,4I0,4W0,1F2,1I0,4I1,4W1,4F2,1W0,1F3,1I1,4I2,4W2,4F3,1W1,1F4,1I2,4I3,4W3,4F4,1W2,1I3,"
      "4I4,4W4,1W3,1I4,1W4\n"
      "2F0,3F0,2F1,3F1,3I0,3W0,2I0,2W0,2F2,3F2,3I1,3W1,2I1,2W1,2F3,3F3,3I2,2I2,3W2,2F4,2W2,3F4,3I3,2I3,3W3,"
      "2W3,3I4,2I4,3W4,2W4\n");
  EXPECT_EQ(format_pytorch_csv(v_building_block_lists(VMemory::kMin, 6, 3)),
            "0F0,0F1,0F2,11F0,11I0,11W0,11F1,11I1,11W1,11F2,0I0,11I2,11W2,0W0,0I1,0W1,0I2,0W2\n"
            "1F0,1F1,1F2,10F0,10F1,10I0,10W0,10F2,10I1,10W1,1I0,1W0,10I2,10W2,1I1,1W1,1I2,1W2\n"
            "2F0,2F1,2F2,9F0,9F1,9F2,9I0,9W0,9I1,9W1,2I0,2W0,9I2,2I1,9W2,2W1,2I2,2W2\n"
            "3F0,3F1,3F2,8F0,8F1,8F2,8I0,8W0,8I1,8W1,3I0,3W0,3I1,3W1,8I2,8W2,3I2,3W2\n"
            "4F0,4F1,4F2,7F0,7F1,7F2,7I0,7W0,4I0,4W0,7I1,7W1,4I1,4W1,7I2,7W2,4I2,4W2\n"
            "5F0,6F0,5F1,6F1,5F2,6F2,6I0,5I0,6W0,5W0,6I1,5I1,6W1,5W1,6I2,5I2,6W2,5W2\n");
}

// A device's F = I = W = 1 ms, M_B = M_W = 1000 (split over its chunks), no comm, a barrier before the steps,
// exactly one batch.
RunTrace v_blocks_run(const std::string& schedule, int devices, int microbatches) {
  const test::ScheduleRunSpec run = test::ScheduleRunSpec(schedule, devices, microbatches, /*batches=*/1)
                                        .with_sync(OptimizerSync::kBarrier);
  return test::run_schedule_plan(
      run, test::UniformStageCosts::ms(1, 1, 1).bytes(1000, 1000).over_chunks(test::chunks_per_device(run)));
}

// The names' promise with F = I = W and W releasing the activations (M_W = M_B): the most any device holds is
// (N+2)/2 microbatches for V-Half and (N+4)/3 for V-Min (integer division), against 1F1B's N.
TEST(VBuildingBlocks, PeakActivationsAreHalfAndAThirdOf1F1Bs) {
  for (int n = 2; n <= 10; ++n) {
    SCOPED_TRACE(fmt::format("N={}", n));
    const auto peak_microbatches = [&](const std::string& schedule) {
      const RunTrace trace = v_blocks_run(schedule, n, 3 * n);
      const Bytes peak =
          *std::max_element(trace.peak_activation_bytes.begin(), trace.peak_activation_bytes.end());
      return static_cast<double>(peak) / 1000.0;
    };
    EXPECT_EQ(peak_microbatches("v-half"), (n + 2) / 2);
    EXPECT_EQ(peak_microbatches("v-min"), (n + 4) / 3);
    EXPECT_EQ(peak_microbatches("1f1b-flush"), n);
  }
}

// Every m runs to the end with every op once (F, I and W per microbatch and stage), whether or not m reaches
// the steady phase.
TEST(VBuildingBlocks, EveryMRunsWithEveryOpOnce) {
  for (int n = 1; n <= 6; ++n) {
    for (int m = 1; m <= 3 * n + 1; ++m) {
      for (const char* schedule : {"v-half", "v-min"}) {
        SCOPED_TRACE(fmt::format("{} N={} m={}", schedule, n, m));
        const RunTrace trace = v_blocks_run(schedule, n, m);
        EXPECT_EQ(trace.ops.size(), static_cast<size_t>(3 * 2 * n * m + 2 * n));  // and one U per stage
        EXPECT_GT(test::whole_run_metrics(trace, m, 1).throughput_samples_per_s, 0);
      }
    }
  }
}

}  // namespace
}  // namespace pipesim
