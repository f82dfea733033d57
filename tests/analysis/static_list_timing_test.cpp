// The dependency-ordered pass over static lists (sim/fast/static_list_timing.h) against the event engine, op
// for op, on random configurations of every static schedule: uneven stage costs, m below and above N, batches
// under barrier and post-validation sync, fixed comm latencies per device. The costs are stated directly as a
// scenario's explicit per-device costs are priced; the task graph (analysis/) checks the engine's critical
// path on each run, hence this layer.
#include "sim/fast/static_list_timing.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/task_graph.h"
#include "base/errors.h"
#include "base/name_table.h"
#include "schedules/registry.h"
#include "schedules/schedule.h"
#include "sim/engine/engine.h"
#include "tests/reduction_costs.h"
#include "tests/schedules/schedule_runs.h"
#include "tests/sim/stage_table_costs.h"

namespace pipesim {
namespace {

using StaticListTimedOpKey = std::tuple<int, int, int, bool>;  // kind, stage, microbatch, synchronized

StaticListTimedOpKey static_list_key_of(const Action& a) {
  return {static_cast<int>(a.kind), a.stage, a.microbatch, a.synchronized};
}

void expect_static_list_run(const RunTrace& engine, const RunTrace& fast, const std::string& what) {
  ASSERT_EQ(engine.ops.size(), fast.ops.size()) << what;
  std::map<StaticListTimedOpKey, const OpRecord*> by_action;
  for (const OpRecord& op : engine.ops) by_action[static_list_key_of(op.action)] = &op;
  for (size_t i = 0; i < fast.ops.size(); ++i) {
    const OpRecord& op = fast.ops[i];
    const auto it = by_action.find(static_list_key_of(op.action));
    ASSERT_NE(it, by_action.end()) << what << describe(op.action);
    const OpRecord& expected = *it->second;
    EXPECT_EQ(op.start_ns, expected.start_ns) << what << describe(op.action);
    EXPECT_EQ(op.end_ns, expected.end_ns) << what << describe(op.action);
    EXPECT_EQ(op.device, expected.device) << what << describe(op.action);
    EXPECT_EQ(op.weight_version, expected.weight_version) << what << describe(op.action);
    // In start order (one instant's ops may come in another order than the engine's passes).
    if (i > 0) {
      EXPECT_LE(fast.ops[i - 1].start_ns, op.start_ns) << what;
    }
  }
  EXPECT_EQ(fast.makespan_ns, engine.makespan_ns) << what;
  EXPECT_EQ(fast.peak_activation_bytes, engine.peak_activation_bytes) << what;
  EXPECT_EQ(fast.peak_in_flight, engine.peak_in_flight) << what;
}

TEST(StaticListTiming, EqualsTheEngineOpForOpOnRandomConfigurations) {
  std::mt19937 rng(7);
  int compared = 0;
  for (const ScheduleInfo& info : registered_schedules()) {
    for (int trial = 0; trial < 8; ++trial) {
      const int stages = std::uniform_int_distribution<int>(2, 6)(rng);
      const int microbatches = std::uniform_int_distribution<int>(1, 3 * stages)(rng);
      std::uniform_real_distribution<double> ms(0.3, 3.0);
      // Per device, each value as a scenario's text would state it (3 decimals, 2 for the latency).
      std::vector<double> f, i, w;
      std::vector<TimeNs> latency;
      for (int s = 0; s < stages; ++s) {
        f.push_back(test::as_written(ms(rng)));
        i.push_back(test::as_written(ms(rng)));
        w.push_back(test::as_written(ms(rng)));
        latency.push_back(ms_to_ns(test::as_written(0.1 * std::uniform_int_distribution<int>(0, 3)(rng), 2)));
      }
      const int batches = std::uniform_int_distribution<int>(1, 3)(rng);
      const OptimizerSync sync = trial % 2 ? OptimizerSync::kPostValidation : OptimizerSync::kBarrier;
      const std::string what =
          fmt::format("{} trial {}: N={} m={} batches={} {}\nF {}\nI {}\nW {}\nlatency {}", info.name, trial,
                      stages, microbatches, batches, name_in(sync_names(), sync), f, i, w, latency);
      test::ScheduleRunSpec spec(info.name, stages, microbatches, batches);
      spec.with_sync(sync).with_comm([latency](int /*devices*/) -> std::unique_ptr<CommModel> {
        return std::make_unique<FixedLatencyComm>(latency);
      });
      std::optional<test::PreparedSchedule> run;
      try {
        run.emplace(test::prepare_schedule(spec));
      } catch (const InputError&) {
        continue;  // a shape the schedule refuses
      }
      const auto* list_schedule = dynamic_cast<const StaticSchedule*>(run->schedule.get());
      if (list_schedule == nullptr) continue;  // run-time rules keep the engine
      // M_B 1 MB and M_W 0.4 MB per microbatch, no U.
      const test::StageTableCosts stated =
          test::device_costs_on(run->layout, test::device_table_ms(stages, f, i, w, 1'000'000, 400'000));
      const DeviceActionLists lists = list_schedule->all_actions(run->spec, stated);
      ExecutionPlan plan = run->schedule->plan(run->spec, stated);
      if (plan.forward_reads.period_microbatches > 0) continue;  // double buffering keeps the engine
      // Every third trial, each stage's step also reduces its gradients before the barrier (0 to 3 ms).
      std::vector<TimeNs> reductions;
      if (trial % 3 == 2) {
        for (int s = 0; s < stages; ++s) reductions.push_back(ms_to_ns(ms(rng)) - ms_to_ns(0.3));
      }
      const test::WithReductionsBeforeBarrier costs(stated, reductions);
      const RunTrace engine = simulate(plan, costs, *run->spec.make_comm());
      const std::optional<RunTrace> fast = time_static_lists(
          {run->layout, lists, plan.total_microbatches, plan.backward_reads, latency}, costs);
      const bool fused = std::any_of(lists.begin(), lists.end(), [](const ActionList& list) {
        return std::any_of(list.begin(), list.end(), [](const Action& a) { return a.fused_with_next; });
      });
      // A fused pair starts when both its ops are ready, and copies of the model join at each step: the
      // engine's.
      if (fused || run->layout.pipelines > 1) {
        EXPECT_FALSE(fast.has_value()) << what;
        continue;
      }
      ASSERT_TRUE(fast.has_value()) << what;
      expect_static_list_run(engine, *fast, what);
      // The task graph, with the barrier's edges carrying each device's work before it, finds the engine's
      // critical path.
      EXPECT_EQ(analyze_task_graph(engine).critical_path_ns, engine.critical_path_ns) << what;
      ++compared;
    }
  }
  EXPECT_GT(compared, 30);
}

}  // namespace
}  // namespace pipesim
