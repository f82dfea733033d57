// Every optimizer, learning-rate schedule and delay correction keeps synchronous schedules bit-identical to
// plain gradient accumulation (the pipeline and the reference update through the same StageUpdater, with
// gradients summed in microbatch order), and counts its state per stage.
#include <gtest/gtest.h>

#include "executor/replay_executor.h"
#include "executor/sequential_training.h"
#include "tests/train/executor_test_util.h"

namespace pipesim::executor {
namespace {

using namespace test;

struct RuleCase {
  std::string name;
  OptimizerConfig optimizer;
  DelayCorrection correction = DelayCorrection::kNone;
};

std::vector<RuleCase> rule_cases() {
  OptimizerConfig sgd{.kind = OptimizerKind::kSgd, .momentum = 0.9F, .weight_decay = 0.01F};
  OptimizerConfig adamw{.kind = OptimizerKind::kAdamW, .weight_decay = 0.1F};
  OptimizerConfig nadam{.kind = OptimizerKind::kNAdam};
  OptimizerConfig muon{.kind = OptimizerKind::kMuon, .momentum = 0.95F, .adamw_lr_ratio = 0.1F};
  OptimizerConfig lion{.kind = OptimizerKind::kLion, .beta2 = 0.99F, .weight_decay = 0.1F};
  OptimizerConfig adan{.kind = OptimizerKind::kAdan, .beta1 = 0.98F, .beta2 = 0.92F};
  OptimizerConfig soap{.kind = OptimizerKind::kSoap, .beta1 = 0.95F, .precondition_frequency = 2};
  return {{"sgd_momentum", sgd},
          {"adamw", adamw},
          {"nadam", nadam},
          {"muon", muon},
          {"lion", lion},
          {"adan", adan},
          {"soap", soap},
          {"adamw_error_feedback", adamw, DelayCorrection::kErrorFeedback},
          {"muon_weight_prediction", muon, DelayCorrection::kWeightPrediction}};
}

TrainingSetup setup_for(const RuleCase& rule) {
  TrainingSetup setup = small_setup();
  setup.learning_rate = 0.01F;
  setup.optimizer = rule.optimizer;
  setup.correction = rule.correction;
  setup.lr_schedule = {
      .warmup_fraction = 0.3, .floor_ratio = 0.1, .total_microbatches = kBatches * kMicrobatches};
  return setup;
}

class SynchronousTrainingPerOptimizer : public ::testing::TestWithParam<std::string> {};

TEST_P(SynchronousTrainingPerOptimizer, LeavesTheWeightsOfPlainGradientAccumulation) {
  for (const RuleCase& rule : rule_cases()) {
    const TrainingSetup setup = setup_for(rule);
    PlannedRun run = plan_small(GetParam());
    const ExecutionResult result = execute_replay(run.plan, *run.costs, *run.comm, setup);
    const auto expected = train_sequentially(setup, run.stages, kBatches);
    const auto initial = build_staged_model(setup, run.stages).initial_parameters;
    for (int s = 0; s < run.stages; ++s) {
      EXPECT_TRUE(bit_identical(result.final_parameters[s], expected[s])) << rule.name << " stage " << s + 1;
      EXPECT_FALSE(bit_identical(result.final_parameters[s], initial[s])) << rule.name << " stage " << s + 1;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Executor, SynchronousTrainingPerOptimizer,
                         ::testing::ValuesIn(synchronous_schedules()),
                         [](const auto& info) { return test_name_of(info.param); });

// AdamW keeps two moments per parameter; error feedback one more buffer; Muon one momentum per hidden-matrix
// value and two moments for the rest; SOAP two moments and four square matrices per matrix.
TEST(ExecutorOptimizerMemory, StateBytesPerStageFollowTheOptimizerAndTheCorrection) {
  for (const RuleCase& rule : rule_cases()) {
    PlannedRun run = plan_small("pipedream-2bw");  // a plan runs once: its policies keep state
    const StagedModel model = build_staged_model(small_setup(), run.stages);
    const ExecutionResult result = execute_replay(run.plan, *run.costs, *run.comm, setup_for(rule));
    ASSERT_FALSE(result.ops.empty());
    for (int s = 0; s < run.stages; ++s) {
      std::size_t hidden = 0;
      std::size_t rest = 0;
      for (const ParameterBlock& b : model.stages[s].parameter_blocks())
        (b.role == ParameterRole::kMatrix ? hidden : rest) += b.size();
      const std::size_t n = hidden + rest;
      ASSERT_EQ(n, model.stages[s].parameter_count());
      std::size_t floats = 0;
      switch (rule.optimizer.kind) {
        case OptimizerKind::kSgd:
          floats = n;
          break;
        case OptimizerKind::kAdamW:
        case OptimizerKind::kNAdam:
          floats = 2 * n;
          break;
        case OptimizerKind::kMuon:
          floats = hidden + 2 * rest;
          break;
        case OptimizerKind::kLion:
          floats = n;
          break;
        case OptimizerKind::kAdan:
          floats = 4 * n;
          break;
        case OptimizerKind::kSoap:  // two moments; L, R and their bases per matrix (embedding, head too)
          floats = 2 * n;
          for (const ParameterBlock& b : model.stages[s].parameter_blocks()) {
            if (b.is_matrix()) floats += 2 * static_cast<std::size_t>(b.rows * b.rows + b.cols * b.cols);
          }
          break;
      }
      if (rule.correction != DelayCorrection::kNone) floats += n;
      EXPECT_EQ(result.optimizer_state_bytes[s], static_cast<Bytes>(floats * sizeof(float)))
          << rule.name << " stage " << s + 1;
    }
  }
}

// Under weight prediction, an asynchronous schedule's forwards read weights that no U produced (the
// prediction), once the stage has seen a delay; without it they read stored versions only.
TEST(ExecutorDelayCorrection, WeightPredictionChangesWhatDelayedForwardsRead) {
  PlannedRun run = plan_small("pipedream");
  TrainingSetup setup = setup_for(rule_cases()[1]);
  const ExecutionResult plain = execute_replay(run.plan, *run.costs, *run.comm, setup);
  setup.correction = DelayCorrection::kWeightPrediction;
  PlannedRun again = plan_small("pipedream");
  const ExecutionResult predicted = execute_replay(again.plan, *again.costs, *again.comm, setup);
  ASSERT_EQ(plain.ops.size(), predicted.ops.size());
  int changed_first_stage = 0;
  for (std::size_t i = 0; i < plain.ops.size(); ++i) {
    const ExecutedOp& a = plain.ops[i];
    if (a.action.kind != OpKind::F) continue;
    // The last stage's backward follows its forward at once: no delay, no prediction.
    if (a.action.stage + 1 == run.stages) {
      EXPECT_EQ(a.weight_version, predicted.ops[i].weight_version);
    }
    if (a.action.stage == 0 && a.weights_fingerprint != predicted.ops[i].weights_fingerprint)
      ++changed_first_stage;
  }
  EXPECT_GT(changed_first_stage, 0);
}

}  // namespace
}  // namespace pipesim::executor
