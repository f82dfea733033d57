// Golden timeline: 1F1B-flush, N=4, m=8, F=1 ms, B=2 ms, no comm. Every start time below was worked out by
// hand from the dependency rules (docs/design.md §2): an op starts when its device is free and its inputs
// exist.
#include <gtest/gtest.h>

#include "tests/schedules/schedule_runs.h"

namespace pipesim {
namespace {

using test::timeline;

RunTrace two_batches() {
  return test::run_schedule_plan("1f1b-flush", 4, 8, /*batches=*/2, test::UniformStageCosts::ms(1.0, 2.0));
}

// How the table was derived, stage 4 first: its F0 starts at 3 (after F0 on stages 1-3), B0 at 4-6. The
// gradient walks back one B (2 ms) per stage: B0 at 6 (stage 3), 8 (stage 2), 10 (stage 1). From then on
// every stage alternates F and B, 3 ms per microbatch; each F starts 1 ms after the same F on the stage
// before, each B 2 ms after the same B on the stage after;
// stage 1 drains B5..B7 every 3 ms as each gradient arrives. Its B7 ends at 33 = (m+N-1)(F+B), where
// every stage's U (0 ms) meets at the barrier.
const std::vector<std::vector<std::string>> kFirstBatch = {
    {"F0@0", "F1@1", "F2@2", "F3@3", "B0@10", "F4@12", "B1@13", "F5@15", "B2@16", "F6@18", "B3@19", "F7@21",
     "B4@22", "B5@25", "B6@28", "B7@31", "U@33"},
    {"F0@1", "F1@2", "F2@3", "B0@8", "F3@10", "B1@11", "F4@13", "B2@14", "F5@16", "B3@17", "F6@19", "B4@20",
     "F7@22", "B5@23", "B6@26", "B7@29", "U@33"},
    {"F0@2", "F1@3", "B0@6", "F2@8", "B1@9", "F3@11", "B2@12", "F4@14", "B3@15", "F5@17", "B4@18", "F6@20",
     "B5@21", "F7@23", "B6@24", "B7@27", "U@33"},
    {"F0@3", "B0@4", "F1@6", "B1@7", "F2@9", "B2@10", "F3@12", "B3@13", "F4@15", "B4@16", "F5@18", "B5@19",
     "F6@21", "B6@22", "F7@24", "B7@25", "U@33"},
};

TEST(Golden1F1B, N4M8FirstBatch) {
  const RunTrace trace = two_batches();
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(timeline(trace, d, /*batch=*/0, 8), kFirstBatch[d]) << "device " << d;
  }
}

// Behind the barrier the second batch repeats the first, 33 ms later.
TEST(Golden1F1B, SecondBatchRepeatsAfterTheBarrier) {
  const RunTrace trace = two_batches();
  for (int d = 0; d < 4; ++d) {
    const std::vector<std::string> second = timeline(trace, d, /*batch=*/1, 8);
    ASSERT_EQ(second.size(), kFirstBatch[d].size());
    for (size_t k = 0; k < second.size(); ++k) {
      const std::string& first = kFirstBatch[d][k];
      const auto at = first.find('@');
      std::string expected = first.substr(0, at);
      if (expected != "U")
        expected = expected.substr(0, 1) + std::to_string(std::stoi(expected.substr(1)) + 8);
      expected += fmt::format("@{:g}", std::stod(first.substr(at + 1)) + 33);
      EXPECT_EQ(second[k], expected) << "device " << d << " op " << k;
    }
  }
  EXPECT_EQ(trace.makespan_ns, ms_to_ns(66));
}

}  // namespace
}  // namespace pipesim
