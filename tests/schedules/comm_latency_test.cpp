// Communication: a fixed latency on every cross-stage dependency (the Zero Bubble papers' model), and the
// link model where messages queue on a shared directed link (sim/comm_model.h), under the registered
// schedules' plans with costs stated directly. Timelines worked out by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/expected_transfers.h"
#include "tests/schedules/schedule_runs.h"
#include "tests/sim/plans.h"
#include "tests/sim/stage_table_costs.h"

namespace pipesim {
namespace {

// One batch exactly of 1F1B-flush on N devices, uniform F and B (ms), a fixed latency c (ms).
RunTrace comm_latency_1f1b(int n, int m, double f, double b, double c) {
  test::ScheduleRunSpec setup("1f1b-flush", n, m, 1);
  setup.latency_ns = ms_to_ns(c);
  setup.fixed_batches = true;
  return test::run_schedule_steady(setup, test::UniformStageCosts::ms(f, b)).trace;
}

// 1F1B-flush, N=3, m=6, F=1, B=2, c=0.5 ms. By hand: F0 reaches stage 3 at 3 (two hops of 1+0.5); its
// gradient reaches stage 1 at 4+2+0.5+2+0.5 = 9. Ops run as soon as possible in list order, so stage 1 idles
// whenever the round trip of the microbatch it waits for is not back yet: B2 at 16 (idle 15-16), B3 at 20
// (idle 19-20), B4 at 23, B5 at 27. Without comm the batch takes (m+N-1)(F+B) = 24; here 29.
const std::vector<std::vector<std::string>> kCommLatencyFirstBatch = {
    {"F0@0", "F1@1", "F2@2", "B0@9", "F3@11", "B1@12", "F4@14", "B2@16", "F5@18", "B3@20", "B4@23", "B5@27",
     "U@29"},
    {"F0@1.5", "F1@2.5", "B0@6.5", "F2@8.5", "B1@9.5", "F3@12.5", "B2@13.5", "F4@15.5", "B3@17.5", "F5@19.5",
     "B4@20.5", "B5@24.5", "U@29"},
    {"F0@3", "B0@4", "F1@6", "B1@7", "F2@10", "B2@11", "F3@14", "B3@15", "F4@17", "B4@18", "F5@21", "B5@22",
     "U@29"},
};

TEST(CommLatency, OneFOneBN3M6) {
  const RunTrace trace = comm_latency_1f1b(3, 6, 1.0, 2.0, 0.5);
  for (int d = 0; d < 3; ++d)
    EXPECT_EQ(test::timeline(trace, d, 0, 6), kCommLatencyFirstBatch[d]) << "device " << d;
  // Every cross-stage dependency is one transfer that arrives exactly c after it was sent.
  EXPECT_EQ(trace.transfers.size(), 2u * 2 * 6);
  for (const TransferRecord& t : trace.transfers) EXPECT_EQ(t.arrival_ns - t.send_ns, ms_to_ns(0.5));
}

// Stage 1 cannot run B(j+N) before the round trip F(1,j+N) -> stage N -> B(1,j+N) is back: N(F+B) of compute
// plus 2(N-1)c of latency. So every N more microbatches add one full round trip of latency, and the comm
// cost grows with m instead of staying at the 2(N-1)c of a single pass.
TEST(CommLatency, EveryNMicrobatchesAddOneRoundTrip) {
  const double f = 1.0, b = 2.0, c = 0.5;
  for (int n : {3, 4}) {
    TimeNs previous = 0;
    for (int groups = 1; groups <= 4; ++groups) {
      const int m = groups * n;
      SCOPED_TRACE(fmt::format("N={} m={}", n, m));
      const TimeNs batch_ns = comm_latency_1f1b(n, m, f, b, c).makespan_ns;
      if (groups > 1) {
        EXPECT_EQ(batch_ns - previous, ms_to_ns(n * (f + b) + 2 * (n - 1) * c));
      }
      previous = batch_ns;
    }
  }
}

// Link model: GPipe, N=2, m=3, F=B=1 ms; each message is 1.5 MB on a 1 GB/s link (1.5 ms on the wire) plus
// 0.25 ms latency. Forwards end every 1 ms, faster than the link drains, so messages queue:
//   activation 0: sent 1,    on the wire 1-2.5,      arrives 2.75
//   activation 1: sent 2,    queued to 2.5, wire -4, arrives 4.25
//   activation 2: sent 3,    queued to 4, wire -5.5, arrives 5.75
// Stage 2 runs F0 2.75, F1 4.25, F2 5.75 (ends 6.75), then B0 6.75, B1 7.75, B2 8.75. Gradients use the
// other direction's link, which queues the same way:
//   gradient 0: sent 7.75, wire 7.75-9.25, arrives 9.5
//   gradient 1: sent 8.75, queued to 9.25, wire -10.75, arrives 11
//   gradient 2: sent 9.75, queued to 10.75, wire -12.25, arrives 12.5
// Stage 1 runs B0 9.5, B1 11, B2 12.5 (ends 13.5), and both U at 13.5.
TEST(LinkComm, MessagesQueueOnASharedLink) {
  test::ScheduleRunSpec setup("gpipe", 2, 3, 1);
  setup.fixed_batches = true;
  setup.comm = [](int devices) {
    return std::make_unique<LinkComm>(devices, 1.0, ms_to_ns(0.25));
  };  // 1 B/ns
  const test::StageTableCosts costs = test::device_costs_on(
      PipelineLayout::linear(2), test::device_table_ms(2, {1}, {1}, {}, 1'000'000, 0, 1'500'000));
  const RunTrace trace = test::run_schedule_steady(setup, costs).trace;
  EXPECT_EQ(test::timeline(trace, 0, 0, 3),
            (std::vector<std::string>{"F0@0", "F1@1", "F2@2", "B0@9.5", "B1@11", "B2@12.5", "U@13.5"}));
  EXPECT_EQ(
      test::timeline(trace, 1, 0, 3),
      (std::vector<std::string>{"F0@2.75", "F1@4.25", "F2@5.75", "B0@6.75", "B1@7.75", "B2@8.75", "U@13.5"}));

  test::expect_transfers(trace, {
                                    {OpKind::F, 0, 1, 1, 2.75},
                                    {OpKind::F, 1, 2, 2.5, 4.25},
                                    {OpKind::F, 2, 3, 4, 5.75},
                                    {OpKind::B, 0, 7.75, 7.75, 9.5},
                                    {OpKind::B, 1, 8.75, 9.25, 11},
                                    {OpKind::B, 2, 9.75, 10.75, 12.5},
                                });
  for (const TransferRecord& t : trace.transfers) EXPECT_EQ(t.bytes, 1'500'000);
}

}  // namespace
}  // namespace pipesim
