// The dependency-ordered pass over static lists (sim/fast/static_list_timing.h) against the event engine, op
// for op, on random configurations of every static schedule: uneven stage costs, m below and above N, batches
// under barrier and post-validation sync, fixed comm latencies per device.
#include "sim/fast/static_list_timing.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <tuple>

#include "analysis/task_graph.h"
#include "api/resolve.h"
#include "schedules/registry.h"
#include "schedules/schedule.h"
#include "sim/engine/engine.h"
#include "tests/reduction_costs.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using TimedOpKey = std::tuple<int, int, int, bool>;  // kind, stage, microbatch, synchronized

TimedOpKey key_of(const Action& a) {
  return {static_cast<int>(a.kind), a.stage, a.microbatch, a.synchronized};
}

void expect_same_run(const RunTrace& engine, const RunTrace& fast, const std::string& what) {
  ASSERT_EQ(engine.ops.size(), fast.ops.size()) << what;
  std::map<TimedOpKey, const OpRecord*> by_action;
  for (const OpRecord& op : engine.ops) by_action[key_of(op.action)] = &op;
  for (size_t i = 0; i < fast.ops.size(); ++i) {
    const OpRecord& op = fast.ops[i];
    const auto it = by_action.find(key_of(op.action));
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
      std::string f, i, w, comm;
      for (int s = 0; s < stages; ++s) {
        f += fmt::format("{}{:.3f}", s ? ", " : "", ms(rng));
        i += fmt::format("{}{:.3f}", s ? ", " : "", ms(rng));
        w += fmt::format("{}{:.3f}", s ? ", " : "", ms(rng));
        comm += fmt::format("{}{:.2f}", s ? ", " : "", 0.1 * std::uniform_int_distribution<int>(0, 3)(rng));
      }
      const std::string yaml = fmt::format(
          "pipeline: {{stages: {}, microbatches: {}, batches: {}}}\n"
          "optimizer: {{sync: {}}}\n"
          "costs: {{forward_ms: [{}], backward_input_ms: [{}], backward_weight_ms: [{}], comm_ms: [{}], "
          "activation_bytes: 1e6, weight_grad_activation_bytes: 4e5}}\n",
          stages, microbatches, std::uniform_int_distribution<int>(1, 3)(rng),
          trial % 2 ? "post-validation" : "barrier", f, i, w, comm);
      const std::string what = fmt::format("{} trial {}:\n{}", info.name, trial, yaml);
      std::optional<ResolvedRun> run;
      try {
        run.emplace(resolve(test::scenario_from_yaml(yaml), {info.name, ScheduleParams(test::kTestSource)}));
        run->schedule->check(run->spec);
      } catch (const InputError&) {
        continue;  // a shape the schedule refuses
      }
      const auto* list_schedule = dynamic_cast<const StaticSchedule*>(run->schedule.get());
      if (list_schedule == nullptr) continue;  // run-time rules keep the engine
      const DeviceActionLists lists = list_schedule->all_actions(run->spec, *run->costs);
      ExecutionPlan plan = run->schedule->plan(run->spec, *run->costs);
      if (plan.forward_reads.period_microbatches > 0) continue;  // double buffering keeps the engine
      // Every third trial, each stage's step also reduces its gradients before the barrier (0 to 3 ms).
      std::vector<TimeNs> reductions;
      if (trial % 3 == 2) {
        for (int s = 0; s < stages; ++s) reductions.push_back(ms_to_ns(ms(rng)) - ms_to_ns(0.3));
      }
      const test::WithReductionsBeforeBarrier costs(*run->costs, reductions);
      const RunTrace engine = simulate(plan, costs, *run->make_comm());
      std::vector<TimeNs> latency;
      for (int d = 0; d < run->layout.devices; ++d) latency.push_back(run->scenario.comm.latency_ns.at(d));
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
      expect_same_run(engine, *fast, what);
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
