#pragma once
// A registered schedule run to its steady state as the api runs a scenario's entry with explicit costs
// (tests/schedules/schedule_runs.h: the spec, the comm, the run length of sim/steady_state.h) and the
// engine's figures over the window (sim/metrics.h) as api/simulation.cpp's recorded path computes them: a
// microbatch of one sample, no sequence length. For tests of the run length and of what reads the trace.
#include <utility>
#include <vector>

#include "sim/metrics.h"
#include "sim/steady_state.h"
#include "tests/schedules/schedule_runs.h"

namespace pipesim::test {

struct SteadyFigures {
  RunTrace trace;
  RunWindow window;
  int batches = 0;      // simulated (the api's result.spec.batches)
  int simulations = 0;  // runs the search took
  RunMetrics metrics;
  std::vector<Bytes> activation_bytes_per_microbatch;  // per device: its stages' M_B
};

inline SteadyFigures steady_figures(const ScheduleRunSpec& setup, const CostModel& costs) {
  SteadyRun steady = run_schedule_steady(setup, costs);
  SteadyFigures f;
  f.trace = std::move(steady.trace);
  f.window = steady.window;
  f.batches = steady.window.total_batches;
  f.simulations = steady.simulations;
  f.metrics = compute_metrics(f.trace, {setup.microbatches, steady.window, 1.0, 0});
  const PipelineLayout& layout = f.trace.layout;
  f.activation_bytes_per_microbatch.assign(static_cast<std::size_t>(layout.devices), 0);
  for (int stage = 0; stage < layout.stages; ++stage)
    f.activation_bytes_per_microbatch[layout.device(stage)] += costs.activation_bytes(stage);
  return f;
}

}  // namespace pipesim::test
