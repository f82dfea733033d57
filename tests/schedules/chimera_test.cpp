// Chimera: the authors' per-worker order (Shigangli/Chimera's runtime, worked from its code) on the
// bidirectional layout, runs for every allowed m, the refusals, and the paper's bubble (D-2)/(2N+D-2).
#include <gtest/gtest.h>

#include "base/errors.h"
#include "schedules/pytorch_csv.h"
#include "schedules/registry.h"
#include "schedules/zb_handcrafted.h"
#include "tests/schedules/schedule_runs.h"

namespace pipesim {
namespace {

// Device r holds stage r of the down copy (even microbatches) and stage 2D-1-r, the up copy's D-1-r (odd).
TEST(Chimera, OrderEqualsTheAuthorsRuntime) {
  EXPECT_EQ(format_pytorch_csv(chimera_lists(2, 2)),
            "0F0,3F1,3B1,0B0\n"
            "2F1,1F0,1B0,2B1\n");
  EXPECT_EQ(format_pytorch_csv(chimera_lists(4, 4)),
            "0F0,0F2,7F1,7B1,7F3,7B3,0B0,0B2\n"
            "1F0,6F1,1F2,6F3,6B1,1B0,6B3,1B2\n"
            "5F1,2F0,5F3,2F2,2B0,5B1,2B2,5B3\n"
            "4F1,4F3,3F0,3B0,3F2,3B2,4B1,4B3\n");
  // Two units concatenated directly: the first unit's last backwards of the device's own pipeline open the
  // second.
  EXPECT_EQ(format_pytorch_csv(chimera_lists(4, 8)),
            "0F0,0F2,7F1,7B1,7F3,7B3,0B0,0F4,0B2,0F6,7F5,7B5,7F7,7B7,0B4,0B6\n"
            "1F0,6F1,1F2,6F3,6B1,1B0,6B3,1B2,1F4,6F5,1F6,6F7,6B5,1B4,6B7,1B6\n"
            "5F1,2F0,5F3,2F2,2B0,5B1,2B2,5B3,5F5,2F4,5F7,2F6,2B4,5B5,2B6,5B7\n"
            "4F1,4F3,3F0,3B0,3F2,3B2,4B1,4F5,4B3,4F7,3F4,3B4,3F6,3B6,4B5,4B7\n");
}

// One batch, F = B = 1 ms per op, no comm, a barrier.
RunTrace run_chimera(int devices, int microbatches) {
  return test::run_schedule_plan("chimera", devices, microbatches, /*batches=*/1,
                                 test::UniformStageCosts::ms(1, 1), {}, OptimizerSync::kBarrier);
}

TEST(Chimera, RunsEveryMultipleOfNAndRefusesTheRest) {
  for (int n : {2, 3, 4, 6, 8}) {
    for (int m = 1; m <= 3 * n + 1; ++m) {
      SCOPED_TRACE(fmt::format("N={} m={}", n, m));
      if (n % 2 != 0 || m % n != 0) {
        try {
          run_chimera(n, m);
          ADD_FAILURE() << "no error";
        } catch (const InputError& e) {
          EXPECT_NE(std::string(e.what()).find(n % 2 != 0 ? "even number of devices" : "multiple of N"),
                    std::string::npos)
              << e.what();
        }
        continue;
      }
      const RunTrace trace = run_chimera(n, m);
      EXPECT_EQ(trace.ops.size(),
                static_cast<size_t>(2 * n * m + 2 * n));  // F and B per stage, U per stage
      for (const OpRecord& op : trace.ops) {
        if (op.action.kind == OpKind::U) continue;
        EXPECT_TRUE(trace.layout.visits(op.action.stage, op.action.microbatch));
      }
    }
  }
}

// The paper's bubble ratio (D-2)/(2N+D-2) for N = D microbatches, with F = B and no comm: every device works
// 2N slots (N/2 microbatches of each copy, F and B) and idles D-2 of the 2N+D-2 the batch takes.
TEST(Chimera, BubbleEqualsThePapersRatio) {
  for (int d : {2, 4, 6, 8, 16}) {
    SCOPED_TRACE(fmt::format("D={}", d));
    const RunTrace trace = run_chimera(d, d);
    TimeNs makespan_ns = 0;
    std::vector<TimeNs> busy_ns(d, 0);
    for (const OpRecord& op : trace.ops) {
      if (op.action.kind == OpKind::U) continue;
      makespan_ns = std::max(makespan_ns, op.end_ns);
      busy_ns[op.device] += op.end_ns - op.start_ns;
    }
    EXPECT_EQ(makespan_ns, ms_to_ns(2.0 * d + d - 2));
    for (int device = 0; device < d; ++device) {
      EXPECT_EQ(busy_ns[device], ms_to_ns(2.0 * d)) << "device " << device;
      EXPECT_DOUBLE_EQ(1.0 - static_cast<double>(busy_ns[device]) / makespan_ns,
                       (d - 2.0) / (2.0 * d + d - 2.0));
    }
  }
}

}  // namespace
}  // namespace pipesim
