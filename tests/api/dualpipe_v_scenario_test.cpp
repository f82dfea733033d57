// DualPipeV through the api: its steady period when a scenario's costs.overlap_fb_ms shortens the fused slot,
// and the scenario's check that the slot is physical. Its orders and runs:
// tests/schedules/dualpipe_v_test.cpp.
#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace pipesim {
namespace {

using test::run_schedule;
using test::scenario_from_yaml;

// DualPipe's point: a fused slot shorter than F + B (costs.overlap_fb_ms) shortens the steady phase, and only
// it: with the slot at F + B the run equals the one without the key. The key is checked against the physics
// of overlap (no shorter than the longer op, no longer than both).
TEST(DualPipeV, AnOverlappedSlotShorterThanFPlusBIsFaster) {
  const auto period = [](const std::string& overlap) {
    const Scenario scenario = scenario_from_yaml(
        "pipeline: {stages: 4, microbatches: 16}\n"
        "costs: {forward_ms: 2, backward_input_ms: 2, backward_weight_ms: 2, comm_ms: 0.1" +
        overlap + "}\n");
    return run_schedule(scenario, "dualpipe-v").metrics.period_ns;
  };
  EXPECT_EQ(period(", overlap_fb_ms: 6"), period(""));
  EXPECT_LT(period(", overlap_fb_ms: 4.5"), period(""));
  EXPECT_LT(period(", overlap_fb_ms: 4"), period(", overlap_fb_ms: 4.5"));
  for (const char* bad : {", overlap_fb_ms: 3.9", ", overlap_fb_ms: 6.1"}) {
    try {
      period(bad);
      ADD_FAILURE() << "no error for" << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("costs.overlap_fb_ms"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("between max(F, B) = 4 ms and F + B = 6 ms on device 1"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace pipesim
