// `pipesim execute`'s library half: a scenario's schedule trained in replay and real mode, summarised.
#include <gtest/gtest.h>

#include "analysis/drift.h"
#include "cli/train/execution_summary.h"
#include "pipesim_source_dir.h"
#include "tests/test_util.h"
#include "train/execute.h"
#include "train/execution_report.h"

namespace pipesim {
namespace {

ExecutedSchedule execute_small(const std::string& name, ExecuteMode mode, int batches = 1,
                               int eval_every = -1) {
  // N = 2, m = 2, F = 1 ms, B = 2 ms, no comm.
  const Scenario scenario = test::uniform_scenario(2, 2, 1.0, 2.0, 0, batches);
  ExecuteOptions options;
  options.mode = mode;
  options.eval_every_batches = eval_every;
  options.validation_samples = 16;
  options.setup.shape = {.input_width = 8, .width = 8, .blocks = 2, .classes = 3};
  return execute_schedule(scenario, {name, ScheduleParams(test::kTestSource)}, options);
}

TEST(ExecuteCommand, ReplaySummaryHasGpipesClosedFormMakespanAndNoDrift) {
  const nlohmann::json summary = execution_summary(execute_small("gpipe", ExecuteMode::kReplay));
  // GPipe: (m + N - 1) F then (m + N - 1) B = 3 ms + 6 ms; U costs nothing here.
  EXPECT_EQ(summary["makespan_ns"].get<long long>(), 9'000'000);
  EXPECT_EQ(summary["ops"].get<int>(), 2 * 2 * 2 + 2);  // F and B per stage and microbatch, one U per stage
  EXPECT_EQ(summary["max_drift_per_stage"], nlohmann::json::array({0, 0}));
  EXPECT_EQ(summary["mode"], "replay");
}

// A run whose loss stops being a number says so under the table, with what to change.
TEST(ExecuteCommand, ADivergedRunIsNamedUnderTheTable) {
  test::TempDir dir;
  const test::CommandResult diverged =
      test::run_pipesim("execute --schedules 1f1b-flush,gpipe --lr 100", dir);
  ASSERT_EQ(diverged.exit_code, 0) << diverged.err;
  EXPECT_NE(diverged.out.find("note: the loss of 1f1b-flush, gpipe is not a number: training diverged"),
            std::string::npos)
      << diverged.out;
  const test::CommandResult fine = test::run_pipesim("execute --schedules 1f1b-flush", dir);
  ASSERT_EQ(fine.exit_code, 0) << fine.err;
  EXPECT_EQ(fine.out.find("diverged"), std::string::npos) << fine.out;
}

TEST(ExecuteCommand, RealAndReplayTrainTheSameSynchronousModel) {
  const nlohmann::json replay = execution_summary(execute_small("1f1b-flush", ExecuteMode::kReplay));
  const nlohmann::json real = execution_summary(execute_small("1f1b-flush", ExecuteMode::kReal));
  const nlohmann::json gpipe = execution_summary(execute_small("gpipe", ExecuteMode::kReplay));
  EXPECT_EQ(real["mode"], "real");
  EXPECT_GE(real["overhead_ns_per_op"].get<long long>(), 0);
  EXPECT_FALSE(replay.contains("overhead_ns_per_op"));  // a replay's clock has no executor overhead
  // One batch: every schedule reads version 0, so the losses are the same numbers.
  EXPECT_EQ(real["first_batch_mean_loss"], replay["first_batch_mean_loss"]);
  EXPECT_EQ(gpipe["first_batch_mean_loss"], replay["first_batch_mean_loss"]);
  EXPECT_GT(real["first_batch_mean_loss"].get<double>(), 0.0);
}

// On the scenario's clock a replay's ops carry the engine's times and its own weight versions, so the figures
// computed from the executed ops equal those of the engine's trace of the same run.
TEST(ExecuteReport, MeasuredFiguresOfAReplayEqualTheEnginesOnTheSameTrace) {
  for (const std::string name : {"1f1b-flush", "zb-h1", "pipedream", "paci"}) {
    const ExecutedSchedule run = execute_small(name, ExecuteMode::kReplay, 5);
    const SimulationResult measured = measured_result(run);
    const RunTrace& engine = run.result.trace;
    ASSERT_EQ(measured.trace.ops.size(), engine.ops.size()) << name;
    for (std::size_t i = 0; i < engine.ops.size(); ++i) {
      EXPECT_EQ(measured.trace.ops[i].start_ns, engine.ops[i].start_ns - engine.ops.front().start_ns) << name;
      EXPECT_EQ(measured.trace.ops[i].weight_version, engine.ops[i].weight_version) << name << " op " << i;
    }
    EXPECT_EQ(measured.trace.peak_in_flight, engine.peak_in_flight) << name;
    const DriftReport drift = compute_drift(engine, {0, 10});  // every microbatch: 5 batches of m = 2
    for (int s = 0; s < 2; ++s) {
      EXPECT_EQ(measured.drift.stages[s].drift, drift.stages[s].drift) << name;
      EXPECT_EQ(measured.drift.stages[s].weight_versions_max, drift.stages[s].weight_versions_max) << name;
    }
    for (int s = 0; s < 2; ++s)
      EXPECT_DOUBLE_EQ(measured.drift.stages[s].drift_mean, drift.stages[s].drift_mean);
    // Whole-run figures: 5 batches x 2 microbatches x b samples over the makespan.
    const double samples = 10.0 * run.setup.samples_per_microbatch;
    EXPECT_DOUBLE_EQ(measured.metrics.throughput_samples_per_s,
                     samples / (static_cast<double>(measured.trace.makespan_ns) / 1e9))
        << name;
    EXPECT_EQ(measured.metrics.period_ns, measured.trace.makespan_ns / 5) << name;
    EXPECT_GT(measured.metrics.period_ns, 0) << name;
    EXPECT_GE(measured.metrics.bubble_fraction, 0) << name;
    EXPECT_LT(measured.metrics.bubble_fraction, 1) << name;
    EXPECT_GT(measured.memory.peak_bytes(), 0) << name;  // the real parameters, gradients and state
  }
}

TEST(ExecuteReport, TrainingCurveHasOneStepPerBatchAndTheEvaluationsAsked) {
  const ExecutedSchedule run = execute_small("1f1b-flush", ExecuteMode::kReplay, 5, 2);
  const std::vector<TrainingStep> curve = training_curve(run);
  ASSERT_EQ(curve.size(), 5U);
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(curve[k].samples, (k + 1) * 2 * run.setup.samples_per_microbatch);
    EXPECT_EQ(curve[k].val_loss.has_value(), k == 1 || k == 3 || k == 4) << k;  // every 2, and the last
    EXPECT_NEAR(curve[k].train_loss, (run.result.losses[2 * k] + run.result.losses[2 * k + 1]) / 2, 1e-12);
    if (k > 0) {
      EXPECT_GT(curve[k].time_s, curve[k - 1].time_s);
    }
  }
  // 1F1B at N = 2, m = 2, F = 1, B = 2 (ms), U free: a batch takes 2F + 2B + F + B... its last B ends at 9
  // ms.
  EXPECT_DOUBLE_EQ(curve[0].time_s, 0.009);
  const std::string csv = training_curve_csv_header() + training_curve_csv_rows(run);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "schedule,step,samples,time_s,clock,train_loss,val_loss,val_accuracy");
  EXPECT_NE(csv.find(",virtual,"), std::string::npos);
  const ExecutedSchedule none = execute_small("1f1b-flush", ExecuteMode::kReplay, 3, -1);
  EXPECT_TRUE(none.evaluations.empty());
  const ExecutedSchedule real = execute_small("1f1b-flush", ExecuteMode::kReal, 3, 0);
  ASSERT_EQ(real.evaluations.size(), 1U);  // the final weights
  EXPECT_EQ(real.evaluations.front().batch, 2);
}

// N >> m: an asynchronous run still filling when it ends. Its figures stay physical: the period is not below
// any device's work per batch and the throughput not above what the makespan allows.
TEST(ExecuteReport, FiguresOfARunThatNeverReachesSteadyStateStayPhysical) {
  const Scenario scenario = test::uniform_scenario(8, 2, 1.0, 2.0, 0, 4);
  for (const std::string name : {"pipedream", "async-1f1b", "paci", "1f1b-flush"}) {
    ExecuteOptions options;
    options.setup.shape = {.input_width = 8, .width = 8, .blocks = 8, .classes = 3};
    const ExecutedSchedule run =
        execute_schedule(scenario, {name, ScheduleParams(test::kTestSource)}, options);
    const SimulationResult measured = measured_result(run);
    std::vector<TimeNs> busy(8, 0);
    for (const OpRecord& op : measured.trace.ops) busy[op.device] += op.duration_ns();
    for (int d = 0; d < 8; ++d) EXPECT_GE(measured.metrics.period_ns * 4, busy[d]) << name << " device " << d;
    EXPECT_GE(measured.metrics.bubble_fraction, 0) << name;
    EXPECT_LT(measured.metrics.bubble_fraction, 1) << name;
    EXPECT_LE(
        measured.metrics.throughput_samples_per_s,
        8.0 * run.setup.samples_per_microbatch / (static_cast<double>(measured.trace.makespan_ns) / 1e9) +
            1e-9)
        << name;
  }
}

// Executor runs estimate their memory, FLOPs and ops before allocating: a width of 4096, a million samples
// per microbatch, 10^5 microbatches and a study of 10^5 blocks were each seen taking minutes or gigabytes.
TEST(ExecuteResources, EstimatesMatchAHandCountAndRunawaysAreRefused) {
  executor::TrainingSetup setup;
  setup.shape.input_width = 8;
  setup.shape.width = 16;
  setup.shape.blocks = 2;
  setup.shape.classes = 4;
  setup.samples_per_microbatch = 4;
  PipelineSpec spec;
  spec.devices = 2;
  spec.microbatches = 8;
  spec.batches = 3;
  const PipelineLayout layout = PipelineLayout::linear(2);
  const ExecutionEstimate e = estimate_execution(setup, spec, layout);
  // params = 2 blocks x 8 x 16² + (8 + 4) x 16 + 4 x 8 = 4096 + 192 + 32 = 4320; 96 samples.
  EXPECT_DOUBLE_EQ(e.flops, 6.0 * 4320 * 96);
  EXPECT_DOUBLE_EQ(e.ops, 3.0 * 2 * 8 * 3 + 2 * 3);
  EXPECT_DOUBLE_EQ(e.bytes, 4 * (4320.0 * (4 + 2) + 4 * 8 * 16 * 12 * 4));
  EXPECT_NO_THROW(check_execution_resources(e, "small", {}));
  test::TempDir dir;
  for (const char* option : {"--width 4096", "--samples 1048576", "--set pipeline.microbatches=100000"}) {
    const test::CommandResult r = test::run_pipesim(
        fmt::format("execute {}/share/scenarios/executor/validate-small.yaml --schedules 1f1b-flush {}",
                    PIPESIM_SOURCE_DIR, option),
        dir);
    EXPECT_EQ(r.exit_code, 1) << option;
    EXPECT_NE(r.err.find("raise"), std::string::npos) << option << ": " << r.err;
  }
}

}  // namespace
}  // namespace pipesim
