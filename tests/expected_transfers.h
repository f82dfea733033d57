#pragma once
// Hand-worked transfer timelines: each transfer's producer, microbatch and send/start/arrival times in ms, in
// the order the trace records them.
#include <gtest/gtest.h>

#include <vector>

#include "sim/trace.h"

namespace pipesim::test {

struct ExpectedTransfer {
  OpKind producer;
  int microbatch;
  double send_ms, start_ms, arrival_ms;
};

inline void expect_transfers(const RunTrace& trace, const std::vector<ExpectedTransfer>& expected) {
  ASSERT_EQ(trace.transfers.size(), expected.size());
  for (size_t k = 0; k < expected.size(); ++k) {
    const TransferRecord& t = trace.transfers[k];
    SCOPED_TRACE(k);
    EXPECT_EQ(t.producer, expected[k].producer);
    EXPECT_EQ(t.microbatch, expected[k].microbatch);
    EXPECT_EQ(t.send_ns, ms_to_ns(expected[k].send_ms));
    EXPECT_EQ(t.start_ns, ms_to_ns(expected[k].start_ms));
    EXPECT_EQ(t.arrival_ns, ms_to_ns(expected[k].arrival_ms));
  }
}

}  // namespace pipesim::test
