// The streamed run (SimulationOptions::keep_trace off: figures computed as ops start, nothing recorded)
// against the recorded one (the trace-based analyses, the reference), on random configurations of every
// registered schedule: uneven stages, m below N, each comm model, both optimizer syncs, weights with
// stashes and shadow copies, noisy costs, the steady-state search and fixed runs. Every figure must agree
// exactly: the api's two paths (api/simulation.cpp's recorded and streamed runs), so they stay here, as do
// the shipped scenarios' reports. The analysis fed by hand is tests/analysis/streaming_analysis_test.cpp's.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "api/schedule_selection.h"
#include "io/scenario.h"
#include "pipesim_source_dir.h"
#include "report/report.h"
#include "report/result_record.h"
#include "report/table_columns.h"
#include "schedules/registry.h"
#include "tests/random_scenarios.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

void expect_same_figures(const SimulationResult& recorded, const SimulationResult& streamed,
                         const std::string& what) {
  EXPECT_TRUE(streamed.trace.ops.empty()) << what;
  EXPECT_EQ(streamed.trace.ops_run(), recorded.trace.ops_run()) << what;
  EXPECT_EQ(streamed.spec.batches, recorded.spec.batches) << what;
  EXPECT_EQ(streamed.simulations, recorded.simulations) << what;
  EXPECT_EQ(streamed.trace.makespan_ns, recorded.trace.makespan_ns) << what;
  EXPECT_EQ(streamed.graph.critical_path_ns, recorded.graph.critical_path_ns) << what;
  const RunMetrics& a = recorded.metrics;
  const RunMetrics& b = streamed.metrics;
  EXPECT_EQ(a.first_steady_microbatch, b.first_steady_microbatch) << what;
  EXPECT_EQ(a.end_microbatch, b.end_microbatch) << what;
  EXPECT_EQ(a.window_ns, b.window_ns) << what;
  EXPECT_EQ(a.period_ns, b.period_ns) << what;
  EXPECT_EQ(a.bubble_fraction, b.bubble_fraction) << what;
  EXPECT_EQ(a.throughput_samples_per_s, b.throughput_samples_per_s) << what;
  EXPECT_EQ(a.zb_batch_cost_ns, b.zb_batch_cost_ns) << what;
  EXPECT_EQ(a.zb_bubble_ns, b.zb_bubble_ns) << what;
  EXPECT_EQ(a.simulated_ops, b.simulated_ops) << what;
  ASSERT_EQ(a.devices.size(), b.devices.size()) << what;
  for (size_t d = 0; d < a.devices.size(); ++d) {
    const std::string where = fmt::format("{}device {}", what, d);
    EXPECT_EQ(a.devices[d].busy_ns_per_batch, b.devices[d].busy_ns_per_batch) << where;
    EXPECT_EQ(a.devices[d].idle_ns_per_batch, b.devices[d].idle_ns_per_batch) << where;
    EXPECT_EQ(a.devices[d].work_ns_per_microbatch, b.devices[d].work_ns_per_microbatch) << where;
    EXPECT_EQ(a.devices[d].run_work_ns_per_microbatch, b.devices[d].run_work_ns_per_microbatch) << where;
    EXPECT_EQ(a.devices[d].peak_activation_bytes, b.devices[d].peak_activation_bytes) << where;
    EXPECT_EQ(a.devices[d].peak_in_flight, b.devices[d].peak_in_flight) << where;
    const DeviceMemory& ma = recorded.memory.devices[d];
    const DeviceMemory& mb = streamed.memory.devices[d];
    EXPECT_EQ(ma.peak_bytes, mb.peak_bytes) << where;
    EXPECT_EQ(ma.peak_time_ns, mb.peak_time_ns) << where;
    EXPECT_EQ(ma.peak_weight_bytes, mb.peak_weight_bytes) << where;
    EXPECT_EQ(ma.peak_activation_bytes, mb.peak_activation_bytes) << where;
    EXPECT_EQ(ma.fixed_bytes, mb.fixed_bytes) << where;
    EXPECT_EQ(ma.weight_versions_max, mb.weight_versions_max) << where;
  }
  ASSERT_EQ(recorded.drift.stages.size(), streamed.drift.stages.size()) << what;
  for (size_t s = 0; s < recorded.drift.stages.size(); ++s) {
    const std::string where = fmt::format("{}stage {}", what, s);
    const StageDrift& x = recorded.drift.stages[s];
    const StageDrift& y = streamed.drift.stages[s];
    EXPECT_EQ(x.drift_max, y.drift_max) << where;
    EXPECT_EQ(x.drift_mean, y.drift_mean) << where;
    EXPECT_EQ(x.drift_histogram, y.drift_histogram) << where;
    EXPECT_EQ(x.staleness_max, y.staleness_max) << where;
    EXPECT_EQ(x.staleness_mean, y.staleness_mean) << where;
    EXPECT_EQ(x.weight_versions_max, y.weight_versions_max) << where;
    EXPECT_EQ(x.in_flight_max, y.in_flight_max) << where;
  }
}

TEST(StreamingAnalysis, EqualsTheRecordedRunOnRandomConfigurations) {
  std::mt19937 rng(20261203);
  int runs = 0;
  for (const ScheduleInfo& info : registered_schedules()) {
    for (int trial = 0; trial < 8; ++trial) {
      const int stages = std::uniform_int_distribution<int>(2, 6)(rng);
      const int microbatches = std::uniform_int_distribution<int>(1, 3 * stages)(rng);
      const int comm = std::uniform_int_distribution<int>(0, 2)(rng);
      const bool post_validation = trial % 4 >= 2;
      const std::string yaml = fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: {}}}\n",
                                           stages, microbatches, 1 + trial % 3) +
                               test::random_costs(rng, stages, comm == 1) + test::kRandomCommLines[comm] +
                               (post_validation ? "optimizer: {sync: post-validation}\n" : "");
      const Scenario scenario = test::scenario_from_yaml(yaml);
      SimulationOptions options;
      options.fixed_batches = trial % 3 == 2;
      const std::uint64_t seed = rng();
      if (trial % 4 == 1) {
        options.decorate_costs = test::jitter_and_stragglers(seed);
      }
      const std::string what = fmt::format("{} trial {}:\n{}", info.name, trial, yaml);
      SimulationResult recorded;
      try {
        recorded = test::run_schedule(scenario, info.name, {}, options);
      } catch (const InputError&) {
        continue;  // a shape the schedule refuses (e.g. m < N for pipedream-2bw, m % N for interleaved)
      }
      options.keep_trace = false;
      const SimulationResult streamed = test::run_schedule(scenario, info.name, {}, options);
      ++runs;
      expect_same_figures(recorded, streamed, what);
    }
  }
  EXPECT_GT(runs, static_cast<int>(registered_schedules().size()) * 4);
}

// The outputs a user reads (the table with every column, the JSON document, the CSV) are the same text
// whether the run was recorded or streamed, for every schedule of the default, a transformer and a PACI
// scenario.
TEST(StreamingAnalysis, ReportsAreTheSameTextAsTheRecordedRun) {
  const std::string dir = std::string(PIPESIM_SOURCE_DIR) + "/share/scenarios/";
  for (const std::string& path :
       {dir + "default.yaml", dir + "transformer/tiny-gpt-cpu.yaml", dir + "paci/gpt2-medium-8stage.yaml"}) {
    const Scenario scenario = load_scenario(path, {});
    std::vector<SimulationResult> recorded;
    std::vector<SimulationResult> streamed;
    SimulationOptions streaming;
    streaming.keep_trace = false;
    for (const ScheduleRequest& request : select_schedules(scenario, "")) {
      recorded.push_back(simulate_schedule(scenario, request));
      streamed.push_back(simulate_schedule(scenario, request, streaming));
    }
    ASSERT_FALSE(recorded.empty()) << path;
    const ResultsSource source{scenario.name, path};
    EXPECT_EQ(results_json_text(source, recorded, {}), results_json_text(source, streamed, {})) << path;
    EXPECT_EQ(results_to_csv(recorded), results_to_csv(streamed)) << path;
    const TableOptions wide{true, {}};
    EXPECT_EQ(render_result_table(scenario.name, recorded, wide),
              render_result_table(scenario.name, streamed, wide))
        << path;
  }
}

}  // namespace
}  // namespace pipesim
