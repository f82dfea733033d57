// The replay executor trains the teacher task under every registered schedule: synchronous schedules must
// leave bit-identical weights to plain gradient accumulation, and every op must read the weight version the
// simulator says, from the executor's own weight store.
#include "executor/replay_executor.h"

#include <gtest/gtest.h>

#include "api/schedule_export.h"
#include "executor/real_executor.h"
#include "executor/sequential_training.h"
#include "tests/train/executor_test_util.h"

namespace pipesim::executor {
namespace {

using namespace test;

struct ReplayCase {
  ExecutionResult result;
  int stages = 0;
  int model_stages = 0;
};

ReplayCase replay(const std::string& name, std::optional<OptimizerSync> sync = std::nullopt,
                  const TrainingSetup& setup = small_setup()) {
  PlannedRun run = plan_small(name, sync);
  return {execute_replay(run.plan, *run.costs, *run.comm, setup), run.stages, run.model_stages};
}

const ExecutedOp& find(const ExecutionResult& r, OpKind kind, int stage, int mb) {
  return find_executed(r, kind, stage, mb);
}

// (schedule, model): the teacher MLP, the character-window MLP and the tiny GPT on the snippet.
class SynchronousScheduleTraining : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(SynchronousScheduleTraining, LeavesTheWeightsOfPlainGradientAccumulation) {
  const auto& [schedule, model] = GetParam();
  const TrainingSetup setup = setup_of_model(model);
  for (const OptimizerSync sync : {OptimizerSync::kBarrier, OptimizerSync::kPostValidation}) {
    const ReplayCase run = replay(schedule, sync, setup);
    // Copies of the model (dualpipe, chimera): every copy of piece k ends with the weights of stage k.
    const auto expected = train_sequentially(setup, run.model_stages, kBatches);
    const auto initial = build_staged_model(setup, run.model_stages).initial_parameters;
    for (int s = 0; s < run.stages; ++s) {
      const int piece = s % run.model_stages;
      EXPECT_TRUE(bit_identical(run.result.final_parameters[s], expected[piece])) << "stage " << s + 1;
      EXPECT_FALSE(bit_identical(run.result.final_parameters[s], initial[piece]))
          << "stage " << s + 1 << " untrained";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    Executor, SynchronousScheduleTraining,
    ::testing::Combine(::testing::Values("gpipe", "1f1b-flush", "interleaved-1f1b", "looped-bfs",
                                         "interleaved-zb", "zb-h1", "zb-h2", "zb-1p", "zb-2p", "zb-v",
                                         "v-half", "v-min", "dualpipe-v", "dualpipe", "chimera"),
                       ::testing::Values("teacher_mlp", "char_mlp", "gpt")),
    [](const auto& info) { return test_name_of(std::get<0>(info.param)) + "_" + std::get<1>(info.param); });

// WPipe trains to the weights of plain training in which the first half of the model (G0, its first chunk)
// takes a one-step-delayed gradient and the second half a current one, bit for bit, step by step of N
// microbatches, for every model kind; 2BW (every stage delayed) likewise, the same reference at m.
TEST(ExecutorReplay, WPipeAndTwoBwLeaveTheWeightsOfTrainingWithTheirHalvesDelayed) {
  for (const std::string model : {"teacher_mlp", "char_mlp", "gpt"}) {
    SCOPED_TRACE(model);
    TrainingSetup setup = setup_of_model(model);
    setup.microbatches_per_batch = kDevices;  // WPipe steps every N microbatches; the data are drawn by step
    const ReplayCase wpipe = replay("wpipe", std::nullopt, setup);
    ASSERT_EQ(wpipe.stages, 2 * kDevices);
    std::vector<bool> delayed(2 * kDevices, false);
    for (int s = 0; s < kDevices; ++s) delayed[s] = true;
    const int steps = kMicrobatches * kBatches / kDevices;
    const auto expected = train_sequentially(setup, wpipe.stages, steps, delayed);
    const auto synchronous = train_sequentially(setup, wpipe.stages, steps);
    for (int s = 0; s < wpipe.stages; ++s) {
      EXPECT_TRUE(bit_identical(wpipe.result.final_parameters[s], expected[s])) << "wpipe stage " << s + 1;
      // The delay is visible: the first half's weights differ from synchronous training's.
      if (s < kDevices) {
        EXPECT_FALSE(bit_identical(expected[s], synchronous[s])) << "stage " << s + 1;
      }
    }
    const TrainingSetup two_bw_setup = setup_of_model(model);
    const ReplayCase two_bw = replay("pipedream-2bw", std::nullopt, two_bw_setup);
    const auto two_bw_expected =
        train_sequentially(two_bw_setup, two_bw.stages, kBatches, std::vector<bool>(two_bw.stages, true));
    for (int s = 0; s < two_bw.stages; ++s)
      EXPECT_TRUE(bit_identical(two_bw.result.final_parameters[s], two_bw_expected[s]))
          << "2bw stage " << s + 1;
  }
}

TEST(ExecutorReplay, EveryScheduleRunsInTheSimulatorsOrderAndReadsItsVersions) {
  for (const ScheduleInfo& info : registered_schedules()) {
    SCOPED_TRACE(info.name);
    const ReplayCase run = replay(info.name);
    const RunTrace& trace = run.result.trace;
    ASSERT_EQ(run.result.ops.size(), trace.ops.size());
    for (std::size_t i = 0; i < trace.ops.size(); ++i) {
      const ExecutedOp& op = run.result.ops[i];
      ASSERT_EQ(op.action, trace.ops[i].action);
      ASSERT_EQ(op.start_ns, trace.ops[i].start_ns);
      EXPECT_EQ(op.weight_version, trace.ops[i].weight_version) << describe(op.action);
    }
    for (int d = 0; d < trace.layout.devices; ++d) {
      Bytes last = -1;
      for (const ExecutedOp& op : run.result.ops) {
        if (op.device == d) last = op.live_activation_bytes;
      }
      EXPECT_EQ(last, 0) << "device " << d << " still holds activations";
    }
    // Δ per microbatch from the executor's own versions equals the simulator's.
    EXPECT_EQ(drift_per_microbatch(run.result.ops), drift_per_microbatch(trace.ops));
  }
}

TEST(ExecutorReplay, PipeDreamBackwardsReadTheStashOfTheirForward) {
  const ReplayCase run = replay("pipedream");
  int stale_reads = 0;
  std::vector<int> steps_done(run.stages, 0);
  for (const ExecutedOp& op : run.result.ops) {
    const Action& a = op.action;
    if (a.kind == OpKind::U) ++steps_done[a.stage];
    if (a.kind != OpKind::B) continue;
    const ExecutedOp& f = find(run.result, OpKind::F, a.stage, a.microbatch);
    EXPECT_EQ(op.weights_fingerprint, f.weights_fingerprint) << describe(a);
    EXPECT_EQ(op.weight_version, f.weight_version) << describe(a);
    if (op.weight_version < steps_done[a.stage]) ++stale_reads;  // newer weights existed: the stash was used
  }
  EXPECT_GT(stale_reads, 0);
}

TEST(ExecutorReplay, AsyncOneFOneBBackwardsReadTheLiveWeights) {
  const ReplayCase run = replay("async-1f1b");
  std::vector<int> steps_done(run.stages, 0);
  int drifted = 0;
  for (const ExecutedOp& op : run.result.ops) {
    const Action& a = op.action;
    if (a.kind == OpKind::U) ++steps_done[a.stage];
    if (a.kind != OpKind::B) continue;
    EXPECT_EQ(op.weight_version, steps_done[a.stage]) << describe(a);
    if (op.weights_fingerprint != find(run.result, OpKind::F, a.stage, a.microbatch).weights_fingerprint) {
      ++drifted;
    }
  }
  EXPECT_GT(drifted, 0);
}

TEST(ExecutorReplay, TwoBufferForwardsReadTheVersionOfTheirMicrobatch) {
  const ReplayCase run = replay("pipedream-2bw");
  for (const ExecutedOp& op : run.result.ops) {
    if (op.action.kind != OpKind::F && op.action.kind != OpKind::B) continue;
    // docs/design.md §4: microbatch k (1-based) uses version max(floor((k-1)/m) - 1, 0), here with k-1 = j.
    EXPECT_EQ(op.weight_version, std::max(op.action.microbatch / kMicrobatches - 1, 0))
        << describe(op.action);
  }
}

TEST(ExecutorReplay, GpipeHoldsMOverNTimesTheActivationsOf1F1BOnTheFirstDevice) {
  auto peak_on_device_0 = [](const ReplayCase& run) {
    Bytes peak = 0;
    for (const ExecutedOp& op : run.result.ops) {
      if (op.device == 0) peak = std::max(peak, op.live_activation_bytes);
    }
    return peak;
  };
  const Bytes gpipe = peak_on_device_0(replay("gpipe"));
  const Bytes one_f_one_b = peak_on_device_0(replay("1f1b-flush"));
  ASSERT_GT(one_f_one_b, 0);
  // Stage 1 keeps m microbatches under GPipe and N under 1F1B (docs/design.md §4), each the same size.
  EXPECT_EQ(gpipe * kDevices, one_f_one_b * kMicrobatches);
}

TEST(ExecutorCsvSchedule, TrainsExactlyLikeTheScheduleItWasExportedFrom) {
  pipesim::test::TempDir dir;
  for (const std::string name : {"1f1b-flush", "zb-h1"}) {
    SCOPED_TRACE(name);
    const std::string path =
        dir.write(name + ".csv", export_schedule_csv(small_scenario(), {name, ScheduleParams("test.yaml")}));
    const ReplayCase original = replay(name, OptimizerSync::kBarrier);
    const ReplayCase from_csv = replay("csv:" + path, OptimizerSync::kBarrier);
    ASSERT_EQ(from_csv.result.ops.size(), original.result.ops.size());
    for (std::size_t i = 0; i < original.result.ops.size(); ++i) {
      ASSERT_EQ(from_csv.result.ops[i].action, original.result.ops[i].action) << i;
      ASSERT_EQ(from_csv.result.ops[i].weight_version, original.result.ops[i].weight_version) << i;
    }
    const auto expected = train_sequentially(small_setup(), from_csv.stages, kBatches);
    PlannedRun real = plan_small("csv:" + path, OptimizerSync::kBarrier);
    ThreadsTransport transport(kDevices);
    const ExecutionResult real_result = execute_real(real.plan, small_setup(), transport);
    for (int s = 0; s < from_csv.stages; ++s) {
      EXPECT_TRUE(bit_identical(from_csv.result.final_parameters[s], expected[s])) << "stage " << s + 1;
      EXPECT_TRUE(bit_identical(real_result.final_parameters[s], expected[s])) << "stage " << s + 1;
    }
  }
}

// A finished microbatch pins no weight copy: otherwise every version its backward read stays alive (the
// executor's memory grew by a weight copy per stage and step).
TEST(ExecutorReplay, FinishedMicrobatchesPinNoWeightCopies) {
  for (const std::string name : {"1f1b-flush", "zb-h1", "pipedream", "pipedream-2bw"}) {
    PlannedRun run = plan_small(name);
    int pinned_at_end = -1;  // after the last op: the observer overwrites it after each
    execute_replay(run.plan, *run.costs, *run.comm, small_setup(),
                   [&](const OpRecord&, const WorkerNumerics& n) {
                     pinned_at_end = 0;
                     for (int s = 0; s < run.stages; ++s) pinned_at_end += n.pinned_weight_copies(s);
                   });
    EXPECT_EQ(pinned_at_end, 0) << name;
  }
}

// A stage keeps the weight versions a forward may still read, no more: one under most schedules, the newest
// and the one pinned for double buffering under 2BW. Kept to the end, every version of the run stayed alive
// (a weight copy per stage and step).
TEST(ExecutorReplay, StagesKeepOnlyTheVersionsForwardsMayRead) {
  for (const auto& [name, most] : {std::pair{"1f1b-flush", 1}, {"pipedream", 1}, {"pipedream-2bw", 2}}) {
    PlannedRun run = plan_small(name);
    int largest = 0;
    execute_replay(run.plan, *run.costs, *run.comm, small_setup(),
                   [&](const OpRecord&, const WorkerNumerics& n) {
                     for (int s = 0; s < run.stages; ++s)
                       largest = std::max(largest, n.kept_weight_versions(s));
                   });
    EXPECT_EQ(largest, most) << name;
  }
}

// A U writes the new version into a retired one's buffer when nothing holds it: a flush makes two buffers per
// stage over the whole run (the live one and the one its U read), 2BW (double buffering) three.
TEST(ExecutorReplay, UpdatesReuseRetiredWeightBuffers) {
  for (const auto& [name, most] : {std::pair{"1f1b-flush", 2}, {"pipedream-2bw", 3}}) {
    PlannedRun run = plan_small(name);
    int made = 0, steps = 0;
    execute_replay(run.plan, *run.costs, *run.comm, small_setup(),
                   [&](const OpRecord&, const WorkerNumerics& n) {
                     for (int s = 0; s < run.stages; ++s) {
                       made = std::max(made, n.weight_buffers_made(s));
                       steps = std::max(steps, n.optimizer_steps(s));
                     }
                   });
    EXPECT_GE(steps, 3) << name;
    EXPECT_EQ(made, most) << name;
  }
}

}  // namespace
}  // namespace pipesim::executor
