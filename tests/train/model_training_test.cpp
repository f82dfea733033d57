// The character models in real mode (one thread per device): synchronous schedules leave the weights of
// plain gradient accumulation, bit for bit, as the teacher model does (replay_executor_test.cpp covers every
// synchronous schedule and model in replay mode).
#include <gtest/gtest.h>

#include "executor/real_executor.h"
#include "executor/sequential_training.h"
#include "tests/train/executor_test_util.h"

namespace pipesim::executor {
namespace {

using namespace test;

TEST(ExecutorModelsReal, CharacterModelsTrainBitIdenticallyToGradientAccumulation) {
  for (const std::string model : {"char_mlp", "gpt"}) {
    for (const std::string schedule : {"1f1b-flush", "zb-h1"}) {
      const TrainingSetup setup = setup_of_model(model);
      PlannedRun run = plan_small(schedule);
      ThreadsTransport transport(kDevices);
      const ExecutionResult result = execute_real(run.plan, setup, transport);
      const auto expected = train_sequentially(setup, run.stages, kBatches);
      for (int s = 0; s < run.stages; ++s) {
        EXPECT_TRUE(bit_identical(result.final_parameters[s], expected[s]))
            << model << " " << schedule << " stage " << s + 1;
      }
    }
  }
}

}  // namespace
}  // namespace pipesim::executor
