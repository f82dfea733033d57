// Registered schedules' own steady-state hints, and streams run by the engine to a steady state (the run
// length of sim/steady_state.h, as the api runs a scenario's entry: tests/schedules/steady_figures.h): a
// window of whole repeats found in one run, and a stream's window cut between batches with exact per-batch
// figures.
#include <gtest/gtest.h>

#include <string>

#include "schedules/registry.h"
#include "sim/steady_state.h"
#include "tests/schedules/steady_figures.h"
#include "tests/sim/plans.h"

namespace pipesim {
namespace {

// F = I = W = 1 ms on every stage, 1 MB of activations per microbatch (an explicit scenario's default).
test::UniformStageCosts steady_runs_uniform_split() {
  return test::UniformStageCosts::ms(1.0, 1.0, 1.0).bytes(1'000'000, 0);
}

TEST(SteadyState, ScheduleHintsGiveTheFillAndTheAccumulationCycle) {
  PipelineSpec spec;
  spec.devices = 8;
  spec.microbatches = 6;
  ScheduleParams params("test");
  params.set("accumulation", "4");
  const SteadyStateHint paci = make_schedule("paci", params)->steady_state(spec);
  EXPECT_EQ(paci.warmup_microbatches, 16);  // 2·max(N, L_1) = 2·8
  EXPECT_EQ(paci.cycle_microbatches, 4);    // a: a stream's timing knows no batches
  EXPECT_EQ(paci.drain_microbatches, 20);   // 16 + a
  const SteadyStateHint flush = make_schedule("1f1b-flush", ScheduleParams("test"))->steady_state(spec);
  EXPECT_EQ(flush.cycle_microbatches, 6);
}

// Async 1F1B at N=64, m=4 with a 0.05 ms latency repeats per device only every 16 batches (each batch
// boundary cuts ops 0.1 ms later on the next device): the widened window holds whole repeats, so one run
// suffices (five before: windows of 1, 2, 4, 8 and 16 batches a half), with the figures of a run of 200.
TEST(SteadyState, AStreamWithALongRepeatConvergesInOneRun) {
  const auto run = [](int batches) {
    test::ScheduleRunSpec setup = test::schedule_run("pipedream", 64, 4, batches);
    setup.latency_ns = ms_to_ns(0.05);
    return test::steady_figures(setup, steady_runs_uniform_split());
  };
  const test::SteadyFigures r = run(1);
  EXPECT_EQ(r.simulations, 1);
  const test::SteadyFigures long_run = run(200);
  EXPECT_EQ(r.metrics.period_ns, long_run.metrics.period_ns);
  EXPECT_EQ(r.metrics.bubble_fraction, long_run.metrics.bubble_fraction);
  EXPECT_EQ(r.metrics.period_ns * 16, ms_to_ns(198.3));  // fifteen batches of 12.4 ms and one of 12.3
}

// The same stream with batches of 220: its pattern (63 forward gaps of 3.1 ms and one of 3.0 on stage 1)
// repeats every 64 microbatches, so windows of whole batches would need lcm(64, 220) / 220 = 16 batches a
// half (34 batches in all, two runs: 1.44 M ops). A stream's window is cut at microbatches: one run of 2
// batches (fill 128, halves of 64, drain 129), and the exact period 220 × 198.3 / 64 ms.
TEST(SteadyState, AStreamWindowIsCutBetweenBatches) {
  const auto run = [](int microbatches, int batches) {
    test::ScheduleRunSpec setup = test::schedule_run("pipedream", 64, microbatches, batches);
    setup.latency_ns = ms_to_ns(0.05);
    return test::steady_figures(setup, steady_runs_uniform_split());
  };
  const test::SteadyFigures r = run(220, 1);
  EXPECT_EQ(r.simulations, 1);
  EXPECT_EQ(r.batches, 2);
  EXPECT_EQ(r.metrics.simulated_ops, 2 * 220 * 64 * 3);  // F, B and a step per microbatch and stage
  const int window = r.metrics.end_microbatch - r.metrics.first_steady_microbatch;
  EXPECT_EQ(window % 128, 0) << window;         // whole repeats of 64 in each half
  EXPECT_NE(window % 220, 0) << window;         // not whole batches
  EXPECT_EQ(r.metrics.period_ns, 681'656'250);  // 220 x 3.0984375 ms
  // Per microbatch the same as batches of 64, whose windows are whole batches.
  const test::SteadyFigures whole = run(64, 1);
  EXPECT_EQ(whole.metrics.period_ns, ms_to_ns(198.3));
  EXPECT_DOUBLE_EQ(r.metrics.bubble_fraction, whole.metrics.bubble_fraction);
  for (size_t d = 0; d < r.metrics.devices.size(); ++d) {
    EXPECT_EQ(r.metrics.devices[d].work_ns_per_microbatch, whole.metrics.devices[d].work_ns_per_microbatch);
    EXPECT_EQ(r.metrics.devices[d].busy_ns_per_batch * 64, whole.metrics.devices[d].busy_ns_per_batch * 220);
  }
}

}  // namespace
}  // namespace pipesim
