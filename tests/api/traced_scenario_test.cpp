// A scenario imported from PyTorch traces (import/trace_import.h) runs, at the pace its slower rank sets.
#include <gtest/gtest.h>

#include "api/simulation.h"
#include "import/pytorch_trace.h"
#include "import/trace_import.h"
#include "tests/import/trace_events.h"

namespace pipesim {
namespace {

TEST(TracedScenario, RunsAtTheSlowerRanksPace) {
  TracedActions traced;
  read_pytorch_trace(test::rank_trace(0, {0}, 2, 4, 1000, {{'B', 2500}}), "rank0.json", traced);
  read_pytorch_trace(test::rank_trace(1, {1}, 2, 4, 1200, {{'B', 2600}}), "rank1.json", traced);
  TraceImportSettings settings;
  settings.schedule = "Schedule1F1B";
  settings.sources = {"rank0.json", "rank1.json"};
  const Scenario s = parse_scenario(scenario_from_trace(traced, settings), "traced.yaml");
  const SimulationResult r = simulate_schedule(s, s.schedules.at(0), {});
  // 1F1B on two stages: the slower rank's F + B per microbatch bounds the period from below.
  EXPECT_GE(r.metrics.period_ns, 4 * ms_to_ns(1.2 + 2.6) - 4);
}

}  // namespace
}  // namespace pipesim
