// ZB-H1 and ZB-H2 (Zero Bubble, arXiv 2401.10241 §3.1) on uniform stages, their plans run for exactly the
// batches asked: the parallelogram of one H2 batch at F = I = W, and valid lists for any m with or without
// comm. The bubbles, periods and peaks of steady runs: tests/api/zb_handcrafted_test.cpp.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "tests/schedules/schedule_runs.h"

namespace pipesim {
namespace {

struct ZbHandcraftedCosts {
  TimeNs forward_ns;
  TimeNs input_ns;   // I
  TimeNs weight_ns;  // W
};

constexpr TimeNs kZbHandcraftedMsNs = 1'000'000;

std::vector<int> zb_handcrafted_stage_counts() {
  return {2, 3, 4, 6, 8};
}

// N stages, m microbatches, exactly `batches` batches: F, I, W as given on every stage, M_B = 10, M_W = 3, a
// fixed comm latency.
RunTrace zb_handcrafted_run(const std::string& schedule, int stages, int microbatches,
                            const ZbHandcraftedCosts& c, OptimizerSync sync, int batches,
                            double comm_ms = 0) {
  return test::run_schedule_plan(
      test::ScheduleRunSpec(schedule, stages, microbatches, batches).with_sync(sync).comm_ms(comm_ms),
      test::UniformStageCosts(c.forward_ns, c.input_ns, c.weight_ns).bytes(10, 3));
}

// With F = I = W the H2 batch is a parallelogram: stage i (1-based) busy without a gap from (i-1)F
// to (i-1)F + m(F+I+W).
TEST(ZbH2, ParallelogramAtEqualCosts) {
  const ZbHandcraftedCosts c{1 * kZbHandcraftedMsNs, 1 * kZbHandcraftedMsNs, 1 * kZbHandcraftedMsNs};
  for (int n : zb_handcrafted_stage_counts()) {
    const int m = 2 * n + 1;
    SCOPED_TRACE(fmt::format("N={} m={}", n, m));
    const RunTrace trace = zb_handcrafted_run("zb-h2", n, m, c, OptimizerSync::kPostValidation, 1);
    std::vector<TimeNs> first(n, kNever), last(n, 0), busy(n, 0);
    for (const OpRecord& op : trace.ops) {
      if (op.action.kind == OpKind::U) continue;
      first[op.device] = std::min(first[op.device], op.start_ns);
      last[op.device] = std::max(last[op.device], op.end_ns);
      busy[op.device] += op.duration_ns();
    }
    for (int d = 0; d < n; ++d) {
      EXPECT_EQ(first[d], d * kZbHandcraftedMsNs) << "stage " << d + 1;
      EXPECT_EQ(last[d], d * kZbHandcraftedMsNs + 3 * m * kZbHandcraftedMsNs) << "stage " << d + 1;
      EXPECT_EQ(busy[d], 3 * m * kZbHandcraftedMsNs) << "stage " << d + 1;
    }
  }
}

// Any m, with or without comm latency: no deadlock (simulate would throw), and every device runs F, I
// and W of each of the batch's microbatches exactly once, I after F and W after I.
TEST(ZbHandcrafted, ValidForEveryMicrobatchCount) {
  const ZbHandcraftedCosts c{1'500'000, 1'200'000, 1 * kZbHandcraftedMsNs};
  for (const std::string schedule : {"zb-h1", "zb-h2"}) {
    for (int n : {1, 2, 3, 4, 5, 8}) {
      for (int m = 1; m <= 2 * n + 1; ++m) {
        for (double comm_ms : {0.0, 0.3}) {
          SCOPED_TRACE(fmt::format("{} N={} m={} comm={} ms", schedule, n, m, comm_ms));
          constexpr int kBatches = 2;
          const RunTrace trace =
              zb_handcrafted_run(schedule, n, m, c, OptimizerSync::kBarrier, kBatches, comm_ms);
          // (device, kind, microbatch) -> start, for every op of the run.
          std::map<std::tuple<int, OpKind, int>, TimeNs> start;
          for (const OpRecord& op : trace.ops) {
            if (op.action.kind == OpKind::U) continue;
            EXPECT_EQ(op.action.stage, op.device);
            const bool fresh =
                start.emplace(std::make_tuple(op.device, op.action.kind, op.action.microbatch), op.start_ns)
                    .second;
            EXPECT_TRUE(fresh) << describe(op.action) << " ran twice";
          }
          EXPECT_EQ(trace.ops.size(), static_cast<size_t>(kBatches * n * (3 * m + 1)));
          for (int d = 0; d < n; ++d) {
            for (int mb = 0; mb < kBatches * m; ++mb) {
              const auto f = start.find({d, OpKind::F, mb});
              const auto i = start.find({d, OpKind::I, mb});
              const auto w = start.find({d, OpKind::W, mb});
              ASSERT_TRUE(f != start.end() && i != start.end() && w != start.end()) << d << " " << mb;
              EXPECT_LT(f->second, i->second);
              EXPECT_LT(i->second, w->second);
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace pipesim
