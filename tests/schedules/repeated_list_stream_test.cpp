// A static schedule's run streamed from one timing pass (sim/fast/repeated_list_stream.h) against the event
// engine streaming the same plan: on random configurations of every registered schedule, every device's
// sequence of op starts, memory samples and transfers, every stage's completed gradients and retired
// versions, and the run's summary (makespan, critical path, peaks, microbatches held) are the engine's.
// Where the pass does not apply (link or blocking comm, run-time rules, double buffering) it declines. The
// costs and comm are stated directly as a scenario's explicit per-device costs and comm are priced; the api's
// choice between the pass and the engine is tests/api/repeated_list_stream_figures_test.cpp.
#include "sim/fast/repeated_list_stream.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "base/errors.h"
#include "schedules/registry.h"
#include "sim/engine/engine.h"
#include "tests/schedules/schedule_runs.h"
#include "tests/sim/stage_table_costs.h"

namespace pipesim {
namespace {

using StreamOpKey =
    std::tuple<int, int, int, int, TimeNs, TimeNs>;  // kind, stage, microbatch, version, start, end
using StreamMemoryKey = std::tuple<TimeNs, Bytes, int>;
using StreamTransferKey = std::tuple<int, int, int, int, Bytes, TimeNs, TimeNs, TimeNs>;
using StreamGradientKey = std::tuple<int, int, int, TimeNs>;
using StreamRetiredKey = std::tuple<int, TimeNs>;

// What an observer was told, per device or per stage in the order it was told (the engine and the pass
// may interleave devices differently within an instant; each device's own order is the run's).
struct StreamRecordingObserver final : RunObserver {
  explicit StreamRecordingObserver(const PipelineLayout& layout)
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

  std::vector<std::vector<StreamOpKey>> ops;
  std::vector<std::vector<StreamMemoryKey>> memory;
  std::vector<std::vector<StreamTransferKey>> transfers;
  std::vector<std::vector<StreamGradientKey>> gradients;
  std::vector<std::vector<StreamRetiredKey>> retired;
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
      test::RandomDeviceCosts drawn = test::random_device_costs(rng, stages, comm == 1);
      if (trial % 3 == 1) drawn.table.optimizer_ns.assign(stages, ms_to_ns(0.4));  // steps that take time
      const int batches = 1 + trial % 3;
      const char* const comm_names[] = {"fixed latency", "link (2 GB/s, 0.1 ms)", "blocking"};
      const std::string what =
          fmt::format("{} trial {}: N={} m={} batches={}{}, comm {}, latency {} ms\n", info.name, trial,
                      stages, microbatches, batches, trial % 2 ? " post-validation" : "", comm_names[comm],
                      ns_to_ms(drawn.latency_ns));
      // The comm: costs.comm_ms on every device, the link model or blocking transfers over that latency.
      test::ScheduleRunSpec spec(info.name, stages, microbatches, batches);
      if (trial % 2) spec.with_sync(OptimizerSync::kPostValidation);
      spec.with_comm(
          [comm, latency_ns = drawn.latency_ns, stages](int devices) -> std::unique_ptr<CommModel> {
            if (comm == 1) return std::make_unique<LinkComm>(devices, 2.0, ms_to_ns(0.1));
            auto fixed = std::make_unique<FixedLatencyComm>(std::vector<TimeNs>(stages, latency_ns));
            if (comm == 2) return std::make_unique<BlockingComm>(std::move(fixed));
            return fixed;
          });
      std::optional<test::PreparedSchedule> run;
      try {
        run.emplace(test::prepare_schedule(spec));
      } catch (const InputError&) {
        continue;  // a shape the schedule refuses
      }
      const test::StageTableCosts costs = test::device_costs_on(run->layout, drawn.table);
      PipelineSpec spec_of_run = run->spec;
      ExecutionPlan fast_plan, engine_plan;
      try {
        fast_plan = run->schedule->plan(spec_of_run, costs);
        engine_plan = run->schedule->plan(spec_of_run, costs);
      } catch (const InputError&) {
        continue;
      }
      StreamRecordingObserver fast(run->layout), engine(run->layout);
      const std::optional<RunTrace> pass =
          stream_repeated_lists(fast_plan, costs, *run->spec.make_comm(), fast);
      if (!pass) {
        ++declined;
        EXPECT_TRUE(fast.ops[0].empty() && fast.memory[0].empty()) << what << "declined after reporting";
        continue;
      }
      EXPECT_NE(comm, 1) << what << "the link model queues transfers: the engine's";
      EXPECT_NE(comm, 2) << what << "blocking transfers hold streams: the engine's";
      const RunTrace reference = simulate(engine_plan, costs, *run->spec.make_comm(), engine);
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

// The pass holds its batch in memory: it streams batches of up to 2^17 ops and leaves larger ones to the
// event loop (1F1B with B: 2 ops per stage and microbatch, so N = 32 and m = 2,048 is exactly 2^17).
TEST(RepeatedListStream, LeavesBatchesOfOver2To17OpsToTheEventLoop) {
  struct StreamIgnoringObserver final : RunObserver {
    void op_started(const OpRecord&) override {}
  };
  for (const int microbatches : {2048, 2049}) {
    // F = 1 ms, B = 2 ms, 0.05 ms on every transfer.
    const test::ScheduleRunSpec spec = test::ScheduleRunSpec("1f1b-flush", 32, microbatches, 1).comm_ms(0.05);
    const test::PreparedSchedule run = test::prepare_schedule(spec);
    const test::StageTableCosts costs =
        test::device_costs_on(run.layout, test::device_table_ms(32, {1.0}, {2.0}, {}));
    const ExecutionPlan plan = run.schedule->plan(run.spec, costs);
    StreamIgnoringObserver observer;
    const std::optional<RunTrace> streamed =
        stream_repeated_lists(plan, costs, *run.spec.make_comm(), observer);
    EXPECT_EQ(streamed.has_value(), microbatches == 2048) << microbatches;
  }
}

}  // namespace
}  // namespace pipesim
