// The engine's microbatch window depth (sim/engine/microbatch_window.h, RunTrace::microbatches_held_max)
// per registered schedule: bounded by the pipeline for 1F1B and the asynchronous schedules, m for GPipe.
#include <gtest/gtest.h>

#include <string>

#include "tests/schedules/schedule_runs.h"
#include "tests/sim/plans.h"

namespace pipesim {
namespace {

// Two batches exactly, F = I = W = 1 ms, 0.1 ms comm latency.
int microbatch_window_held_max(const std::string& schedule, int stages, int microbatches) {
  test::ScheduleRunSpec setup(schedule, stages, microbatches, 2);
  setup.latency_ns = ms_to_ns(0.1);
  setup.fixed_batches = true;
  return test::run_schedule_steady(setup, test::UniformStageCosts::ms(1, 1, 1)).trace.microbatches_held_max;
}

TEST(MicrobatchWindow, EngineHoldsTheScheduleInFlightDepthNotTheRun) {
  for (const int m : {8, 64, 512}) {
    EXPECT_EQ(microbatch_window_held_max("1f1b-flush", 4, m), 4) << m;
    EXPECT_LE(microbatch_window_held_max("zb-h1", 4, m), 8) << m;
    EXPECT_LE(microbatch_window_held_max("pipedream", 4, m), 8) << m;
    EXPECT_LE(microbatch_window_held_max("paci", 4, m), 8) << m;
    EXPECT_EQ(microbatch_window_held_max("gpipe", 4, m), m) << m;  // GPipe holds every microbatch of a batch
  }
}

}  // namespace
}  // namespace pipesim
