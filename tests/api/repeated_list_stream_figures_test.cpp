// The api's runs of a static schedule without a trace (api/simulation.cpp streams them from one timing pass,
// sim/fast/repeated_list_stream.h) against its runs on the event engine: the same figures the api computes
// (period, bubble, the Zero Bubble batch cost, the steady-state search's runs, per-device memory peaks). The
// pass against the engine on stated plans is tests/schedules/repeated_list_stream_test.cpp.
#include <gtest/gtest.h>

#include "tests/test_util.h"

namespace pipesim {
namespace {

// The whole run as `run` computes it without a trace: the same figures from the pass and the engine.
TEST(RepeatedListStream, SimulateScheduleGivesTheEnginesFigures) {
  for (const char* schedule : {"1f1b-flush", "zb-h1", "interleaved-1f1b", "zb-v", "gpipe"}) {
    const Scenario scenario = test::scenario_from_yaml(
        "pipeline: {stages: 4, microbatches: 8, batches: 2}\n"
        "costs: {forward_ms: 1.0, backward_input_ms: 1.2, backward_weight_ms: 0.8, comm_ms: 0.05,\n"
        "        optimizer_ms: 0.3, activation_bytes: 1e6, weight_grad_activation_bytes: 4e5}\n");
    SimulationOptions options;
    options.keep_trace = false;
    const SimulationResult pass = test::run_schedule(scenario, schedule, {}, options);
    options.event_engine = true;
    const SimulationResult engine = test::run_schedule(scenario, schedule, {}, options);
    EXPECT_EQ(pass.metrics.period_ns, engine.metrics.period_ns) << schedule;
    EXPECT_EQ(pass.metrics.bubble_fraction, engine.metrics.bubble_fraction) << schedule;
    EXPECT_EQ(pass.metrics.zb_batch_cost_ns, engine.metrics.zb_batch_cost_ns) << schedule;
    EXPECT_EQ(pass.trace.makespan_ns, engine.trace.makespan_ns) << schedule;
    EXPECT_EQ(pass.simulations, engine.simulations) << schedule;
    ASSERT_EQ(pass.memory.devices.size(), engine.memory.devices.size()) << schedule;
    for (size_t d = 0; d < pass.memory.devices.size(); ++d) {
      EXPECT_EQ(pass.memory.devices[d].peak_bytes, engine.memory.devices[d].peak_bytes) << schedule;
      EXPECT_EQ(pass.memory.devices[d].peak_time_ns, engine.memory.devices[d].peak_time_ns) << schedule;
    }
  }
}

}  // namespace
}  // namespace pipesim
