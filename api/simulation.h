#pragma once
// The one-way data flow: scenario -> cost model + schedule -> engine -> trace -> (task graph, metrics).
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analysis/run_result.h"
#include "api/resolve.h"
#include "io/scenario.h"
#include "sim/comm_model.h"
#include "sim/limits.h"

namespace pipesim {

struct SimulationOptions {
  // Build the Boost task graph: validates every dependency of the realized run and cross-checks the
  // engine's inline critical path (RunTrace::critical_path_ns). Off: the inline path alone.
  bool analyze_graph = false;
  // Simulate until steady, measure whole cycles and assert the figures' physics (sim/steady_state.h,
  // api/run_assertions.h). With decorate_costs (noise) the costs never repeat exactly: one run with the
  // minimum warm-up and a fixed window of two batches.
  // fixed_batches: exactly the scenario's batches, figures over the whole run (engine tests, `pipesim show`).
  bool fixed_batches = false;
  // Wraps the scenario's cost model, e.g. in seeded jitter for `pipesim check`; empty: none.
  std::function<std::unique_ptr<CostModel>(std::unique_ptr<CostModel>)> decorate_costs = {};
  // Record the run: every op, transfer and memory sample (timelines, `--trace`, per-microbatch drift, the
  // critical path's ops). Off: the figures are computed while the run streams
  // (analysis/streaming_analysis.h), in memory that does not grow with the run; the result's trace then
  // holds only the run's totals and its drift and memory reports no per-microbatch values or timelines.
  bool keep_trace = true;
  // Streamed runs of static schedules under fixed latencies come from one timing pass instead of the event
  // loop (sim/fast/repeated_list_stream.h), with the same figures. On: the event loop always (tests compare).
  bool event_engine = false;
  Limits limits;  // the run's ceilings (sim/limits.h)
};

SimulationResult simulate_schedule(const Scenario& scenario, const ScheduleRequest& request,
                                   const SimulationOptions& options = {});

// Every schedule the scenario lists (all registered ones when it lists none).
std::vector<ScheduleRequest> requested_schedules(const Scenario& scenario);

}  // namespace pipesim
