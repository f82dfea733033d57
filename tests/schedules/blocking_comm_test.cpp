// Blocking comm (comm.blocking: true): a transfer starts once the receiver's compute stream is free and holds
// the sender's and the receiver's streams until it arrives, as Megatron's blocking p2p does. Timelines worked
// out by hand; every registered schedule still finishes, and no op overlaps a transfer that holds its device.
// The plans run on costs stated directly; reading comm.blocking is tests/io/blocking_comm_section_test.cpp.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "schedules/registry.h"
#include "tests/expected_transfers.h"
#include "tests/schedules/schedule_runs.h"
#include "tests/sim/plans.h"
#include "tests/sim/stage_table_costs.h"

namespace pipesim {
namespace {

// Blocking comm over fixed latencies (ms, per sending device).
std::function<std::unique_ptr<CommModel>(int)> blocking_comm_of(const std::vector<double>& latency_ms) {
  return [latency_ms](int /*devices*/) -> std::unique_ptr<CommModel> {
    std::vector<TimeNs> latency_ns;
    for (double ms : latency_ms) latency_ns.push_back(ms_to_ns(ms));
    return std::make_unique<BlockingComm>(std::make_unique<FixedLatencyComm>(latency_ns));
  };
}

// One batch exactly of 1F1B-flush on 2 devices, F per device and B (ms), c = 0.5 ms, blocking.
RunTrace blocking_1f1b(int microbatches, const std::vector<double>& forward_ms, double backward_ms) {
  test::ScheduleRunSpec setup("1f1b-flush", 2, microbatches, 1);
  setup.fixed_batches = true;
  setup.comm = blocking_comm_of({0.5, 0.5});
  return test::run_schedule_steady(
             setup, test::device_costs_on(PipelineLayout::linear(2),
                                          test::device_table_ms(2, forward_ms, {backward_ms}, {})))
      .trace;
}

// 1F1B-flush, N=2, m=4, F=1, B=2, c=0.5 ms, blocking. Lists: device 1 F0 F1 B0 F2 B1 F3 B2 B3, device 2
// F0 B0 F1 B1 F2 B2 F3 B3. By hand (a transfer holds both devices over [start, start+c]):
//   0    D1 F0 (-1)            1    act0 [1, 1.5]: both held
//   1.5  D1 F1 (-2.5), D2 F0 (-2.5)
//   2.5  act1: D2's F0 ends at 2.5, so [2.5, 3]      3    D2 B0 (-5); D1 waits for grad0
//   5    grad0 [5, 5.5]        5.5  D1 B0 (-7.5), D2 F1 (-6.5)     6.5  D2 B1 (-8.5)
//   7.5  D1 F2 (-8.5)          8.5  grad1 and act2 both [8.5, 9] (they overlap: a batched isend/irecv)
//   9    D1 B1 (-11), D2 F2 (-10)   10  D2 B2 (-12)   11  D1 F3 (-12)
//   12   grad2 and act3 [12, 12.5]  12.5 D1 B2 (-14.5), D2 F3 (-13.5)   13.5 D2 B3 (-15.5)
//   15.5 grad3 [15.5, 16]      16   D1 B3 (-18)      18   U on both (barrier)
TEST(BlockingComm, OneFOneBN2M4ByHand) {
  const RunTrace trace = blocking_1f1b(4, {1}, 2);
  EXPECT_EQ(test::timeline(trace, 0, 0, 4),
            (std::vector<std::string>{"F0@0", "F1@1.5", "B0@5.5", "F2@7.5", "B1@9", "F3@11", "B2@12.5",
                                      "B3@16", "U@18"}));
  EXPECT_EQ(test::timeline(trace, 1, 0, 4),
            (std::vector<std::string>{"F0@1.5", "B0@3", "F1@5.5", "B1@6.5", "F2@9", "B2@10", "F3@12.5",
                                      "B3@13.5", "U@18"}));
  ASSERT_EQ(trace.transfers.size(), 8u);
  for (const TransferRecord& t : trace.transfers) {
    EXPECT_TRUE(t.blocking);
    EXPECT_EQ(t.start_ns, t.send_ns);  // the receiver was free whenever a message was sent
    EXPECT_EQ(t.arrival_ns - t.start_ns, ms_to_ns(0.5));
  }
}

// N=2, m=2, F=1 on stage 1 and 2 on stage 2, B=2, c=0.5, blocking. The receiver is busy when act1 is sent,
// so the sender waits in its send:
//   0 D1 F0 (-1); act0 [1, 1.5]; 1.5 D1 F1 (-2.5), D2 F0 (-3.5)
//   2.5 act1 sent, but D2 computes until 3.5: it moves [3.5, 4], D1 held from 2.5 to 4
//   4 D2 B0 (-6); 6 grad0 [6, 6.5]; 6.5 D1 B0 (-8.5), D2 F1 (-8.5); 8.5 D2 B1 (-10.5)
//   10.5 grad1 [10.5, 11]; 11 D1 B1 (-13); 13 U.
TEST(BlockingComm, SenderWaitsForABusyReceiver) {
  const RunTrace trace = blocking_1f1b(2, {1, 2}, 2);
  EXPECT_EQ(test::timeline(trace, 0, 0, 2),
            (std::vector<std::string>{"F0@0", "F1@1.5", "B0@6.5", "B1@11", "U@13"}));
  EXPECT_EQ(test::timeline(trace, 1, 0, 2),
            (std::vector<std::string>{"F0@1.5", "B0@4", "F1@6.5", "B1@8.5", "U@13"}));
  test::expect_transfers(trace, {
                                    {OpKind::F, 0, 1, 1, 1.5},
                                    {OpKind::F, 1, 2.5, 3.5, 4},
                                    {OpKind::B, 0, 6, 6, 6.5},
                                    {OpKind::B, 1, 10.5, 10.5, 11},
                                });
  // Held time is no compute: stage 1 computes 6 ms of the 13 ms batch.
  TimeNs compute_ns = 0;
  for (const OpRecord& op : trace.ops) compute_ns += op.device == 0 ? op.duration_ns() : 0;
  EXPECT_EQ(compute_ns, ms_to_ns(6));
}

// Every registered schedule finishes under blocking comm (on heterogeneous stages, with an interleaved
// layout too), and no op runs on a device while a transfer holds it: the sender from send to arrival, the
// receiver from start to arrival.
TEST(BlockingComm, NoScheduleDeadlocksAndHeldStreamsRunNoOp) {
  const test::StageCostTable per_device =
      test::device_table_ms(4, {1, 1.5, 1, 2}, {1, 2, 1.5, 1}, {1}, /*activation_bytes=*/2, /*M_W=*/1);
  for (const ScheduleInfo& info : registered_schedules()) {
    SCOPED_TRACE(info.name);
    test::ScheduleRunSpec setup(info.name, 4, 8, 2);
    setup.comm = blocking_comm_of({0.3, 0.7, 0.2, 0.4});
    const RunTrace trace = test::run_schedule_steady(
                               setup, test::device_costs_on(test::prepare_schedule(setup).layout, per_device))
                               .trace;
    ASSERT_FALSE(trace.transfers.empty());
    for (const TransferRecord& t : trace.transfers) {
      ASSERT_TRUE(t.blocking);
      EXPECT_GE(t.start_ns, t.send_ns);
      for (const OpRecord& op : trace.ops) {
        const TimeNs held_from = op.device == t.src_device   ? t.send_ns
                                 : op.device == t.dst_device ? t.start_ns
                                                             : kNever;
        if (held_from == kNever) continue;
        EXPECT_TRUE(op.end_ns <= held_from || op.start_ns >= t.arrival_ns)
            << describe(op.action) << " on device " << op.device << " runs " << ns_to_ms(op.start_ns) << "-"
            << ns_to_ms(op.end_ns) << " ms inside a transfer held " << ns_to_ms(held_from) << "-"
            << ns_to_ms(t.arrival_ns);
      }
    }
  }
}

}  // namespace
}  // namespace pipesim
