// The api's run of a scenario to its steady state: figures that do not depend on `batches` and break no
// physics (api/run_assertions.h) over every schedule, shape and costs, zero-cost tables refused, the
// batches simulated in the reports, and the assertions firing. The run length's own tests are
// tests/sim/steady_state_test.cpp, tests/schedules/steady_state_runs_test.cpp and
// tests/analysis/steady_state_drift_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "api/run_assertions.h"
#include "base/errors.h"
#include "report/report.h"
#include "report/result_record.h"
#include "report/table_columns.h"
#include "schedules/registry.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

// F = I = W = 1 ms on every stage (B = 2 ms when not split), as in the repro.
Scenario uniform_split(int n, int m, int batches) {
  return test::scenario_from_yaml(
      fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: {}}}\n"
                  "costs: {{forward_ms: 1.0, backward_input_ms: 1.0, backward_weight_ms: 1.0}}\n",
                  n, m, batches));
}

// Uneven stages (the first and last heavier, as with an embedding and a loss), an optimizer step and a
// comm latency.
Scenario uneven(int n, int m, int batches) {
  std::string forward, input, weight;
  for (int i = 0; i < n; ++i) {
    const double scale = i == 0 ? 1.5 : i == n - 1 ? 1.8 : 1.0 + 0.1 * (i % 3);
    forward += fmt::format("{}{:.2f}", i ? ", " : "", scale);
    input += fmt::format("{}{:.2f}", i ? ", " : "", 1.1 * scale);
    weight += fmt::format("{}{:.2f}", i ? ", " : "", 0.7 * scale);
  }
  return test::scenario_from_yaml(fmt::format(
      "pipeline: {{stages: {}, microbatches: {}, batches: {}}}\n"
      "costs: {{forward_ms: [{}], backward_input_ms: [{}], backward_weight_ms: [{}], optimizer_ms: 0.3, "
      "comm_ms: 0.05}}\n",
      n, m, batches, forward, input, weight));
}

SimulationResult run(const Scenario& scenario, const std::string& name, int accumulation = 0) {
  std::map<std::string, std::string> params;
  if (accumulation > 0) params["accumulation"] = std::to_string(accumulation);
  SimulationOptions options;
  options.analyze_graph = false;
  return test::run_schedule(scenario, name, params, options);
}

// Zero-length ops: refused where the costs are read; a cost table of zeros built in code (which no reader
// accepts) reaches the metrics, which stop with an input error instead of dividing by a zero period.
TEST(SteadyState, AllZeroCostsAreAnErrorNotZeroFigures) {
  const std::string yaml =
      "pipeline: {stages: 4, microbatches: 2}\n"
      "costs: {forward_ms: 0, backward_input_ms: 0, backward_weight_ms: 0}\n";
  EXPECT_THROW(test::scenario_from_yaml(yaml), InputError);
  Scenario s = test::scenario_from_yaml(
      "pipeline: {stages: 4, microbatches: 2}\n"
      "costs: {forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1}\n");
  for (std::vector<TimeNs>* times :
       {&s.costs.forward_ns, &s.costs.backward_input_ns, &s.costs.backward_weight_ns}) {
    times->assign(times->size(), 0);
  }
  for (const char* name : {"paci", "1f1b-flush", "zb-h1"}) {
    try {
      run(s, name);
      ADD_FAILURE() << name << ": expected an InputError";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("every op of this run lasts 0 ns"), std::string::npos) << e.what();
    }
  }
}

TEST(SteadyState, ReportsCarryTheBatchesSimulated) {
  const SimulationResult r = run(uniform_split(8, 1, 4), "paci", 1);
  const auto json = result_record(r);
  EXPECT_EQ(json["pipeline"]["batches_requested"], 4);
  EXPECT_EQ(json["pipeline"]["batches_simulated"], r.spec.batches);
  EXPECT_GT(r.spec.batches, 16);  // past the 2N warm-up
  const std::vector<std::string> header = csv_header();
  const std::vector<std::string> row = csv_row(r);
  const auto column = std::find(header.begin(), header.end(), "batches_simulated") - header.begin();
  EXPECT_EQ(row.at(column), std::to_string(r.spec.batches));
  EXPECT_NE(render_result_table("t", {r}, TableOptions{true, {}}).find(fmt::format(" {} ", r.spec.batches)),
            std::string::npos);
}

// --- the grid: every schedule, N ∈ 2..32, m ∈ 1..64, a, uniform and uneven costs -------------------------

// Every steady-state figure of a run (run totals such as the makespan, the critical path and the op count
// grow with the run and are left out).
std::vector<double> figures(const SimulationResult& r) {
  const RunMetrics& m = r.metrics;
  std::vector<double> f = {static_cast<double>(m.period_ns), m.throughput_samples_per_s, m.bubble_fraction,
                           static_cast<double>(r.memory.peak_bytes())};
  // The ZB per-batch figures exist only where batches end in a flush (null for asynchronous schedules).
  if (has_batch_bubble(r)) {
    f.push_back(m.bubble_rate_zb);
    f.push_back(static_cast<double>(m.zb_batch_cost_ns));
  }
  for (const DeviceMetrics& d : m.devices) {
    for (TimeNs v :
         {d.busy_ns_per_batch, d.idle_ns_per_batch, d.work_ns_per_microbatch, d.peak_activation_bytes}) {
      f.push_back(static_cast<double>(v));
    }
    f.push_back(d.peak_in_flight);
  }
  for (const StageDrift& s : r.drift.stages) {
    for (double v : {static_cast<double>(s.drift_max), s.drift_mean, static_cast<double>(s.staleness_max),
                     s.staleness_mean, static_cast<double>(s.weight_versions_max),
                     static_cast<double>(s.in_flight_max)}) {
      f.push_back(v);
    }
  }
  return f;
}

struct GridPoint {
  int n;
  int m;
};

// N from 2 to 32; m below N, at most N/4, equal, above, up to 64.
std::vector<GridPoint> grid_points() {
  std::vector<GridPoint> points;
  for (int n : {2, 3, 5, 8, 12, 32}) {
    std::vector<int> ms = {1, 2, 3, std::max(1, n / 4), n - 1, n, 2 * n + 1};
    if (n == 32) ms = {1, 8, 32, 64};
    std::sort(ms.begin(), ms.end());
    ms.erase(std::unique(ms.begin(), ms.end()), ms.end());
    for (int m : ms) {
      if (m >= 1 && m <= 64) points.push_back({n, m});
    }
  }
  return points;
}

void expect_batches_independent(const std::function<Scenario(int batches)>& scenario, const std::string& name,
                                int a) {
  SimulationResult minimum;
  try {
    minimum = run(scenario(1), name, a);
  } catch (const InputError&) {
    return;  // a shape the schedule does not allow (interleaved: m a multiple of N; 2BW: m ≥ N)
  }
  // Above the minimum and not a multiple of its cycle.
  const SimulationResult longer = run(scenario(2 * minimum.spec.batches + 3), name, a);
  EXPECT_GE(longer.spec.batches, 2 * minimum.spec.batches + 3);
  const std::vector<double> a_figures = figures(minimum);
  const std::vector<double> b_figures = figures(longer);
  ASSERT_EQ(a_figures.size(), b_figures.size());
  for (size_t k = 0; k < a_figures.size(); ++k) {
    EXPECT_NEAR(a_figures[k], b_figures[k], 1e-9 * std::max(1.0, std::abs(a_figures[k])))
        << "figure " << k << " with " << minimum.spec.batches << " and " << longer.spec.batches << " batches";
  }
}

TEST(SteadyStateGrid, EveryScheduleShapeAndCostsGiveBatchesIndependentPhysicalFigures) {
  for (const ScheduleInfo& info : registered_schedules()) {
    for (const GridPoint& p : grid_points()) {
      // zb-1p/2p search 8 candidates per run: the largest shapes are left to the others.
      if (info.name.starts_with("zb-") && p.n * p.m > 256) continue;
      const std::vector<int> as =
          info.name == "paci" ? std::vector<int>{1, 2, 3, 4, 8, 16} : std::vector<int>{0};
      for (int a : as) {
        if (p.n == 32 && a != 0 && a != 3 && a != 16) continue;
        SCOPED_TRACE(fmt::format("{} N={} m={} a={}", info.name, p.n, p.m, a));
        expect_batches_independent([&](int b) { return uniform_split(p.n, p.m, b); }, info.name, a);
        expect_batches_independent([&](int b) { return uneven(p.n, p.m, b); }, info.name, a);
      }
    }
  }
}

// The assertions fire: a result whose period is below m x work is an internal error naming the run.
TEST(RunAssertions, APeriodBelowTheWorkIsAnInternalErrorNamingTheRun) {
  SimulationResult r = run(uniform_split(4, 2, 1), "1f1b-flush");
  EXPECT_NO_THROW(assert_physical(r, true));
  SimulationResult broken = r;
  broken.metrics.period_ns = 2 * broken.metrics.devices[0].work_ns_per_microbatch - 1;
  EXPECT_THROW(assert_physical(broken, true), InternalError);
  broken = r;
  broken.metrics.bubble_fraction = -0.01;
  try {
    assert_physical(broken, true);
    FAIL();
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("1f1b-flush N=4 m=2"), std::string::npos) << e.what();
  }
  broken = r;
  broken.drift.stages[0].weight_versions_max = 2;
  EXPECT_THROW(assert_physical(broken, true), InternalError);
  broken = r;
  // 1F1B N=4, m=2: 2 batches of (m+N−1)·3 ms = 30 ms hold 2·2·3 = 12 ms of work per device; a quarter of the
  // window is shorter than that, so it cannot have been steady.
  broken.metrics.window_ns /= 4;
  EXPECT_THROW(assert_physical(broken, true), InternalError);
}

}  // namespace
}  // namespace pipesim
