// A static schedule's run streamed from one timing pass (sim/fast/repeated_list_stream.h) against the event
// engine streaming the same plan: on random configurations of every registered schedule, every device's
// sequence of op starts, memory samples and transfers, every stage's completed gradients and retired
// versions, and the run's summary (makespan, critical path, peaks, microbatches held) are the engine's.
// Where the pass does not apply (link or blocking comm, run-time rules, double buffering) it declines.
#include "sim/fast/repeated_list_stream.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <tuple>

#include "api/resolve.h"
#include "schedules/registry.h"
#include "sim/engine/engine.h"
#include "tests/random_scenarios.h"
#include "tests/test_util.h"

namespace pipesim {
namespace {

using OpKey = std::tuple<int, int, int, int, TimeNs, TimeNs>;  // kind, stage, microbatch, version, start, end
using MemoryKey = std::tuple<TimeNs, Bytes, int>;
using TransferKey = std::tuple<int, int, int, int, Bytes, TimeNs, TimeNs, TimeNs>;
using GradientKey = std::tuple<int, int, int, TimeNs>;
using RetiredKey = std::tuple<int, TimeNs>;

// What an observer was told, per device or per stage in the order it was told (the engine and the pass
// may interleave devices differently within an instant; each device's own order is the run's).
struct RecordingObserver final : RunObserver {
  explicit RecordingObserver(const PipelineLayout& layout)
      : ops(layout.devices),
        memory(layout.devices),
        transfers(layout.devices),
        gradients(layout.stages),
        retired(layout.stages) {}
  void op_started(const OpRecord& op) override {
    EXPECT_GE(op.start_ns, last_time_ns) << "op starts out of time order";
    last_time_ns = op.start_ns;
    ops[op.device].emplace_back(static_cast<int>(op.action.kind), op.action.stage, op.action.microbatch,
                                op.weight_version, op.start_ns, op.end_ns);
  }
  void transfer_sent(const TransferRecord& t) override {
    transfers[t.src_device].emplace_back(static_cast<int>(t.producer), t.dst_stage, t.microbatch,
                                         t.dst_device, t.bytes, t.send_ns, t.start_ns, t.arrival_ns);
  }
  void memory_changed(int device, const MemorySample& s) override {
    memory[device].emplace_back(s.time_ns, s.activation_bytes, s.in_flight);
  }
  void gradient_complete(const GradientRecord& g) override {
    gradients[g.stage].emplace_back(g.microbatch, g.forward_version, g.gradient_version, g.gradient_end_ns);
  }
  void version_retired(int stage, int version, TimeNs dead_ns) override {
    retired[stage].emplace_back(version, dead_ns);
  }
  void run_finished(TimeNs makespan_ns) override { finished_ns = makespan_ns; }

  std::vector<std::vector<OpKey>> ops;
  std::vector<std::vector<MemoryKey>> memory;
  std::vector<std::vector<TransferKey>> transfers;
  std::vector<std::vector<GradientKey>> gradients;
  std::vector<std::vector<RetiredKey>> retired;
  TimeNs finished_ns = -1;
  TimeNs last_time_ns = 0;
};

TEST(RepeatedListStream, ReportsWhatTheEngineReports) {
  std::mt19937 rng(77);
  int streamed = 0, declined = 0;
  for (const ScheduleInfo& info : registered_schedules()) {
    for (int trial = 0; trial < 8; ++trial) {
      const int stages = std::uniform_int_distribution<int>(2, 6)(rng);
      const int microbatches = std::uniform_int_distribution<int>(1, 3 * stages)(rng);
      const int comm = trial % 4 == 3 ? 1 + trial / 4 % 2 : 0;  // mostly fixed latencies
      std::string costs = test::random_costs(rng, stages, comm == 1);
      if (trial % 3 == 1) costs.insert(costs.find('{') + 1, "optimizer_ms: 0.4, ");  // steps that take time
      const std::string yaml =
          fmt::format("pipeline: {{stages: {}, microbatches: {}, batches: {}}}\n{}", stages, microbatches,
                      1 + trial % 3, trial % 2 ? "optimizer: {sync: post-validation}\n" : "") +
          costs + test::kRandomCommLines[comm];
      const std::string what = fmt::format("{} trial {}:\n{}", info.name, trial, yaml);
      std::optional<ResolvedRun> run;
      try {
        run.emplace(resolve(test::scenario_from_yaml(yaml), {info.name, ScheduleParams(test::kTestSource)}));
      } catch (const InputError&) {
        continue;  // a shape the schedule refuses
      }
      PipelineSpec spec = run->spec;
      ExecutionPlan fast_plan, engine_plan;
      try {
        fast_plan = run->schedule->plan(spec, *run->costs);
        engine_plan = run->schedule->plan(spec, *run->costs);
      } catch (const InputError&) {
        continue;
      }
      RecordingObserver fast(run->layout), engine(run->layout);
      const std::optional<RunTrace> pass =
          stream_repeated_lists(fast_plan, *run->costs, *run->make_comm(), fast);
      if (!pass) {
        ++declined;
        EXPECT_TRUE(fast.ops[0].empty() && fast.memory[0].empty()) << what << "declined after reporting";
        continue;
      }
      EXPECT_NE(comm, 1) << what << "the link model queues transfers: the engine's";
      EXPECT_NE(comm, 2) << what << "blocking transfers hold streams: the engine's";
      const RunTrace reference = simulate(engine_plan, *run->costs, *run->make_comm(), engine);
      ++streamed;
      EXPECT_EQ(pass->makespan_ns, reference.makespan_ns) << what;
      EXPECT_EQ(pass->critical_path_ns, reference.critical_path_ns) << what;
      EXPECT_EQ(pass->ops_run(), reference.ops_run()) << what;
      EXPECT_EQ(pass->total_microbatches, reference.total_microbatches) << what;
      EXPECT_EQ(pass->peak_activation_bytes, reference.peak_activation_bytes) << what;
      EXPECT_EQ(pass->peak_in_flight, reference.peak_in_flight) << what;
      EXPECT_EQ(pass->stage_peak_in_flight, reference.stage_peak_in_flight) << what;
      EXPECT_EQ(pass->microbatches_held_max, reference.microbatches_held_max) << what;
      EXPECT_EQ(fast.finished_ns, engine.finished_ns) << what;
      for (int d = 0; d < run->layout.devices; ++d) {
        EXPECT_EQ(fast.ops[d], engine.ops[d]) << what << "device " << d;
        EXPECT_EQ(fast.memory[d], engine.memory[d]) << what << "device " << d;
        EXPECT_EQ(fast.transfers[d], engine.transfers[d]) << what << "device " << d;
      }
      for (int s = 0; s < run->layout.stages; ++s) {
        EXPECT_EQ(fast.gradients[s], engine.gradients[s]) << what << "stage " << s;
        EXPECT_EQ(fast.retired[s], engine.retired[s]) << what << "stage " << s;
      }
    }
  }
  EXPECT_GT(streamed, 60);
  EXPECT_GT(declined, 10);  // run-time rules, double buffering, link and blocking comm
}

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

namespace pipesim {
namespace {

// The pass holds its batch in memory: it streams batches of up to 2^17 ops and leaves larger ones to the
// event loop (1F1B with B: 2 ops per stage and microbatch, so N = 32 and m = 2,048 is exactly 2^17).
TEST(RepeatedListStream, LeavesBatchesOfOver2To17OpsToTheEventLoop) {
  struct Ignoring final : RunObserver {
    void op_started(const OpRecord&) override {}
  };
  for (const int microbatches : {2048, 2049}) {
    const Scenario scenario =
        test::scenario_from_yaml(fmt::format("pipeline: {{stages: 32, microbatches: {}, batches: 1}}\n"
                                             "costs: {{forward_ms: 1.0, backward_ms: 2.0, comm_ms: 0.05}}\n",
                                             microbatches));
    const ResolvedRun run = resolve(scenario, {"1f1b-flush", ScheduleParams(test::kTestSource)});
    const ExecutionPlan plan = run.schedule->plan(run.spec, *run.costs);
    Ignoring observer;
    const std::optional<RunTrace> streamed =
        stream_repeated_lists(plan, *run.costs, *run.make_comm(), observer);
    EXPECT_EQ(streamed.has_value(), microbatches == 2048) << microbatches;
  }
}

}  // namespace
}  // namespace pipesim
