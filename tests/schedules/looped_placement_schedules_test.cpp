// PyTorch's two other looped-placement schedules: looped-bfs (ScheduleLoopedBFS) and interleaved-zb
// (ScheduleInterleavedZeroBubble). Their per-rank orders against PyTorch's generators, worked from its code
// (schedules.py: _calculate_single_rank_operations and _get_1f1b_rank_ops; the same working reproduces the
// Interleaved1F1B order another test holds), a timeline worked by hand, every allowed m runs, and the
// aliases.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "base/errors.h"
#include "schedules/registry.h"
#include "tests/schedules/schedule_runs.h"

namespace pipesim {
namespace {

// The export of one batch's lists, a device's F = I = W = 1 ms split over its chunks.
std::string looped_order_of(const std::string& schedule, int devices, int microbatches, int chunks) {
  return test::static_order_csv(
      test::ScheduleRunSpec(schedule, devices, microbatches).param("chunks", std::to_string(chunks)),
      test::UniformStageCosts::ms(1, 1, 1).bytes(1'000'000, 0).over_chunks(chunks));
}

// Every microbatch's F of a chunk, chunk by chunk; then the Bs, chunks and microbatches in reverse.
TEST(LoopedBfs, OrderEqualsPyTorchsGenerator) {
  EXPECT_EQ(looped_order_of("looped-bfs", 2, 3, 2),
            "0F0,0F1,0F2,2F0,2F1,2F2,2B2,2B1,2B0,0B2,0B1,0B0\n"
            "1F0,1F1,1F2,3F0,3F1,3F2,3B2,3B1,3B0,1B2,1B1,1B0\n");
}

// N = 2, 2 chunks, m = 3, chunk F = 1 ms and B = 2 ms (device costs halved over its chunks), no comm. By
// hand: device 0 runs F0.0-F0.2 in [0, 3); device 1 F1.0-F1.2 in [1, 4); device 0 F2.0-F2.2 in [3, 6) (F1.0
// ended at 2); device 1 F3.0-F3.2 in [4, 7), then B3.2, B3.1, B3.0 in [7, 13); device 0 B2.2 at 9, B2.1 at
// 11, B2.0 at 13 (each waits for B3 of its microbatch), ending at 15; device 1 B1.2 in [13, 15), B1.1 [15,
// 17), B1.0 [17, 19); device 0 B0.2 [15, 17), B0.1 [17, 19), B0.0 [19, 21). Each device holds all 6 chunk
// activations.
TEST(LoopedBfs, TimelineWorkedByHand) {
  // A device's F = 2 ms, B = I + W = 4 ms, M_B = 10, over its two chunks.
  const RunTrace trace =
      test::run_schedule_plan(test::ScheduleRunSpec("looped-bfs", 2, 3, /*batches=*/1),
                              test::UniformStageCosts::ms(2, 3, 1).bytes(10, 0).over_chunks(2));
  EXPECT_EQ(trace.makespan_ns, ms_to_ns(21));
  EXPECT_EQ(test::start_ns(trace, OpKind::F, 2, 0), ms_to_ns(3));
  EXPECT_EQ(test::start_ns(trace, OpKind::B, 2, 0), ms_to_ns(13));
  EXPECT_EQ(test::start_ns(trace, OpKind::B, 1, 0), ms_to_ns(17));
  EXPECT_EQ(trace.peak_in_flight, (std::vector<int>{6, 6}));
}

// interleaved-zb: N = 4, 2 chunks, m = 8 (two rounds of 4) and m = 6 (one round of 6).
TEST(InterleavedZb, OrderEqualsPyTorchsGenerator) {
  EXPECT_EQ(looped_order_of("interleaved-zb", 2, 2, 2),
            "0F0,0F1,2F0,2F1,2I0,2W0,2I1,2W1,0I0,0W0,0I1,0W1\n"
            "1F0,1F1,3F0,3I0,3F1,3I1,3W0,1I0,3W1,1I1,1W0,1W1\n");
  EXPECT_EQ(
      looped_order_of("interleaved-zb", 4, 8, 2),
      "0F0,0F1,0F2,0F3,4F0,4F1,4F2,4F3,4I0,4W0,0F4,4I1,4W1,0F5,4I2,4W2,0F6,4I3,4W3,0F7,0I0,0W0,4F4,0I1,0W1,"
      "4F5,0I2,0W2,4F6,0I3,0W3,4F7,4I4,4W4,4I5,4W5,4I6,4W6,4I7,4W7,0I4,0W4,0I5,0W5,0I6,0W6,0I7,0W7\n"
      "1F0,1F1,1F2,1F3,5F0,5F1,5F2,5I0,5F3,5I1,5W0,1F4,5I2,5W1,1F5,5I3,5W2,1F6,1I0,5W3,1F7,1I1,1W0,5F4,1I2,"
      "1W1,5F5,1I3,1W2,5F6,5I4,1W3,5F7,5I5,5W4,5I6,5W5,5I7,5W6,1I4,5W7,1I5,1W4,1I6,1W5,1I7,1W6,1W7\n"
      "2F0,2F1,2F2,2F3,6F0,6F1,6I0,6F2,6I1,6F3,6I2,6W0,2F4,6I3,6W1,2F5,2I0,6W2,2F6,2I1,6W3,2F7,2I2,2W0,6F4,"
      "2I3,2W1,6F5,6I4,2W2,6F6,6I5,2W3,6F7,6I6,6W4,6I7,6W5,2I4,6W6,2I5,6W7,2I6,2W4,2I7,2W5,2W6,2W7\n"
      "3F0,3F1,3F2,3F3,7F0,7I0,7F1,7I1,7F2,7I2,7F3,7I3,7W0,3F4,3I0,7W1,3F5,3I1,7W2,3F6,3I2,7W3,3F7,3I3,3W0,"
      "7F4,7I4,3W1,7F5,7I5,3W2,7F6,7I6,3W3,7F7,7I7,7W4,3I4,7W5,3I5,7W6,3I6,7W7,3I7,3W4,3W5,3W6,3W7\n");
  EXPECT_EQ(looped_order_of("interleaved-zb", 4, 6, 2),
            "0F0,0F1,0F2,0F3,0F4,0F5,4F0,4F1,4F2,4F3,4I0,4W0,4F4,4I1,4W1,4F5,4I2,4W2,4I3,4W3,4I4,4W4,4I5,4W5,"
            "0I0,0W0,0I1,0W1,0I2,0W2,0I3,0W3,0I4,0W4,0I5,0W5\n"
            "1F0,1F1,1F2,1F3,1F4,1F5,5F0,5F1,5F2,5I0,5F3,5I1,5W0,5F4,5I2,5W1,5F5,5I3,5W2,5I4,5W3,5I5,5W4,1I0,"
            "5W5,1I1,1W0,1I2,1W1,1I3,1W2,1I4,1W3,1I5,1W4,1W5\n"
            "2F0,2F1,2F2,2F3,2F4,2F5,6F0,6F1,6I0,6F2,6I1,6F3,6I2,6W0,6F4,6I3,6W1,6F5,6I4,6W2,6I5,6W3,2I0,6W4,"
            "2I1,6W5,2I2,2W0,2I3,2W1,2I4,2W2,2I5,2W3,2W4,2W5\n"
            "3F0,3F1,3F2,3F3,3F4,3F5,7F0,7I0,7F1,7I1,7F2,7I2,7F3,7I3,7W0,7F4,7I4,7W1,7F5,7I5,7W2,3I0,7W3,3I1,"
            "7W4,3I2,7W5,3I3,3W0,3I4,3W1,3I5,3W2,3W3,3W4,3W5\n");
}

// Both take what their rounds hold: looped-bfs any m, interleaved-zb the m that m div N equal rounds hold;
// each run finishes with every op once, uneven costs and comm; interleaved-zb never holds more activations
// than interleaved-1f1b.
TEST(InterleavedZb, RunsEveryMItsRoundsHoldAndHoldsNoMoreThanInterleaved1F1B) {
  for (int n : {2, 3, 4, 5}) {
    for (int v : {1, 2, 3}) {
      for (int m = 1; m <= 3 * n; ++m) {
        SCOPED_TRACE(fmt::format("N={} chunks={} m={}", n, v, m));
        // A device's F = 1.5, I = 1, W = 0.5 ms, M_B = 10, M_W = 3, over its v chunks; 0.1 ms comm.
        const test::UniformStageCosts costs =
            test::UniformStageCosts::ms(1.5, 1, 0.5).bytes(10, 3).over_chunks(v);
        const auto run = [&](const char* schedule) {
          return test::run_schedule_plan(test::ScheduleRunSpec(schedule, n, m, /*batches=*/1)
                                             .param("chunks", std::to_string(v))
                                             .comm_ms(0.1),
                                         costs);
        };
        const RunTrace bfs = run("looped-bfs");
        EXPECT_EQ(bfs.ops.size(), static_cast<size_t>(n * v * (2 * m + 1)));  // F, B per (stage, mb); U
        if (m % std::max(1, m / n) != 0) {
          EXPECT_THROW(run("interleaved-zb"), InputError);
          continue;
        }
        const RunTrace zb = run("interleaved-zb");
        EXPECT_EQ(zb.ops.size(), static_cast<size_t>(n * v * (3 * m + 1)));  // F, I, W; U
        const RunTrace one_f_one_b = run("interleaved-1f1b");
        for (int d = 0; d < n; ++d) EXPECT_LE(zb.peak_in_flight[d], one_f_one_b.peak_in_flight[d]);
      }
    }
  }
}

TEST(InterleavedZb, PyTorchNamesSelectThem) {
  const ScheduleParams params("test");
  EXPECT_EQ(make_schedule("ScheduleLoopedBFS", params)->label(), "looped-bfs(chunks=2)");
  EXPECT_EQ(make_schedule("interleavedzerobubble", params)->label(), "interleaved-zb(chunks=2)");
}

}  // namespace
}  // namespace pipesim
