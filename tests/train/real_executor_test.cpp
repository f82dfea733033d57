// Real mode: one thread per device, each asking its own DevicePolicy through a LocalView over its local
// state, tensors moving through the threads transport.
#include "executor/real_executor.h"

#include <gtest/gtest.h>

#include "base/errors.h"
#include "executor/sequential_training.h"
#include "tests/train/executor_test_util.h"

namespace pipesim::executor {
namespace {

using namespace test;

struct RealCase {
  ExecutionResult result;
  int stages = 0;
};

RealCase run_real(const std::string& name, std::optional<OptimizerSync> sync = std::nullopt,
                  const std::map<std::string, std::string>& params = {}) {
  PlannedRun run = plan_small(name, sync, params);
  ThreadsTransport transport(kDevices);
  return {execute_real(run.plan, small_setup(), transport), run.stages};
}

TEST(ExecutorThreadsTransport, DeliversTaggedTensorsAndCountsBarrierArrivals) {
  ThreadsTransport transport(2);
  const std::uint64_t before = transport.news_count(1);
  Matrix<float> tensor(1, 2);
  tensor.values = {1.5F, -2.0F};
  transport.send(1, {3, 7, TensorKind::kGradient}, tensor);
  EXPECT_NE(transport.news_count(1), before);
  EXPECT_EQ(transport.news_count(0), 0U);
  auto received = transport.receive_all(1);
  ASSERT_EQ(received.size(), 1U);
  EXPECT_EQ(received[0].first, (TensorTag{3, 7, TensorKind::kGradient}));
  EXPECT_EQ(received[0].second.values, tensor.values);
  EXPECT_TRUE(transport.receive_all(1).empty());
  // No news: the wait times out with false.
  EXPECT_FALSE(transport.wait_for_news(0, transport.news_count(0), 5));
  transport.arrive_at_barrier(0, 0);
  EXPECT_FALSE(transport.barrier_complete(0));
  const std::uint64_t seen = transport.news_count(0);
  transport.arrive_at_barrier(1, 0);
  EXPECT_TRUE(transport.barrier_complete(0));
  EXPECT_FALSE(transport.barrier_complete(1));
  EXPECT_TRUE(transport.wait_for_news(0, seen, 5));  // a completed barrier is news for every device
}

class SynchronousScheduleRealTraining : public ::testing::TestWithParam<std::string> {};

TEST_P(SynchronousScheduleRealTraining, LeavesTheWeightsOfPlainGradientAccumulation) {
  const RealCase run = run_real(GetParam());
  const auto expected = train_sequentially(small_setup(), run.stages, kBatches);
  for (int s = 0; s < run.stages; ++s) {
    EXPECT_TRUE(bit_identical(run.result.final_parameters[s], expected[s])) << "stage " << s + 1;
  }
  EXPECT_EQ(run.result.ops.size(),
            static_cast<std::size_t>(run.stages) * kMicrobatches * kBatches *
                    (GetParam().starts_with("zb") ? 3 : 2) +
                static_cast<std::size_t>(run.stages) * kBatches);  // F, B (or I and W) per stage and mb; U
}

// Copies of the model on device threads: each W's gradient goes to the other copy too, and every copy's
// step applies the batch's m gradients in microbatch order, so both copies end with the weights of plain
// gradient accumulation, under a barrier or without one.
TEST(ExecutorReal, CopiesOfTheModelAllReduceToTheWeightsOfPlainGradientAccumulation) {
  for (const std::string name : {"dualpipe", "chimera"}) {
    for (const OptimizerSync sync : {OptimizerSync::kBarrier, OptimizerSync::kPostValidation}) {
      SCOPED_TRACE(name);
      PlannedRun run = plan_small(name, sync);
      ThreadsTransport transport(kDevices);
      const ExecutionResult result = execute_real(run.plan, small_setup(), transport);
      const auto expected = train_sequentially(small_setup(), run.model_stages, kBatches);
      ASSERT_EQ(run.stages, 2 * run.model_stages);
      for (int s = 0; s < run.stages; ++s) {
        EXPECT_TRUE(bit_identical(result.final_parameters[s], expected[s % run.model_stages]))
            << "stage " << s + 1;
      }
      for (double loss : result.losses) EXPECT_GT(loss, 0.0);  // both copies' last stages computed theirs
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Executor, SynchronousScheduleRealTraining,
                         ::testing::ValuesIn(synchronous_schedules()),
                         [](const auto& info) { return test_name_of(info.param); });

TEST(ExecutorReal, EveryScheduleCompletesAndStashingBackwardsReadTheirForwardsWeights) {
  for (const ScheduleInfo& info : registered_schedules()) {
    SCOPED_TRACE(info.name);
    PlannedRun planned = plan_small(info.name);
    const bool stashes = planned.plan.backward_reads == BackwardReads::kStashedWeights;
    ThreadsTransport transport(kDevices);
    const ExecutionResult result = execute_real(planned.plan, small_setup(), transport);
    int forwards = 0;
    int backwards = 0;
    for (const ExecutedOp& op : result.ops) {
      if (op.action.kind == OpKind::F) ++forwards;
      if (op.action.kind != OpKind::B && op.action.kind != OpKind::I) continue;
      ++backwards;
      const ExecutedOp& f = find_executed(result, OpKind::F, op.action.stage, op.action.microbatch);
      if (stashes) {
        EXPECT_EQ(op.weight_version, f.weight_version) << describe(op.action);
        EXPECT_EQ(op.weights_fingerprint, f.weights_fingerprint) << describe(op.action);
      }
      EXPECT_LT(f.end_ns, op.start_ns + 1) << describe(op.action);  // ran after its forward
    }
    for (double loss : result.losses) EXPECT_GT(loss, 0.0);
    EXPECT_EQ(forwards, planned.model_stages * kMicrobatches * kBatches);  // each microbatch through one copy
    EXPECT_EQ(backwards, forwards);
  }
}

TEST(ExecutorReal, PaciDriftStaysWithinItsBound) {
  for (const int a : {1, 2, 3}) {
    const RealCase run = run_real("paci", std::nullopt, {{"accumulation", std::to_string(a)}});
    int largest_on_stage_1 = 0;
    for (const auto& [key, drift] : drift_per_microbatch(run.result.ops)) {
      const int stage_1_based = key.first + 1;
      const int bound = (kDevices - stage_1_based + a - 1) / a;  // ceil((N - i) / a), docs/design.md §4
      EXPECT_LE(drift, bound) << "stage " << stage_1_based << " mb " << key.second << " a=" << a;
      EXPECT_GE(drift, 0);
      if (key.first == 0) largest_on_stage_1 = std::max(largest_on_stage_1, drift);
    }
    // Stage 1 runs F1 while mb 0 makes its round trip, so mb 1's backward comes after one more step.
    EXPECT_GE(largest_on_stage_1, 1) << "a=" << a;
  }
}

TEST(ExecutorReal, LiveActivationsReturnToZeroOnEveryDevice) {
  const RealCase run = run_real("1f1b-flush");
  std::vector<Bytes> last(kDevices, -1);
  for (const ExecutedOp& op : run.result.ops) last[op.device] = op.live_activation_bytes;
  EXPECT_EQ(last, std::vector<Bytes>(kDevices, 0));
}

TEST(ExecutorReal, OverheadPerOpIsPartOfTheTimeSinceTheDevicesLastOp) {
  const RealCase run = run_real("1f1b-flush");
  std::vector<TimeNs> last_end(kDevices, -1);
  TimeNs total_overhead_ns = 0;
  for (const ExecutedOp& op : run.result.ops) {  // in start order, so in order per device
    SCOPED_TRACE(describe(op.action));
    EXPECT_GE(op.overhead_ns, 0);
    // Choosing and receiving happen between ops, sending inside the op: never more than both spans.
    if (last_end[op.device] >= 0) {
      EXPECT_LE(op.overhead_ns, op.end_ns - last_end[op.device]);
    }
    last_end[op.device] = op.end_ns;
    total_overhead_ns += op.overhead_ns;
  }
  EXPECT_GT(total_overhead_ns, 0);  // asking a policy and sending a tensor take some time
}

}  // namespace
}  // namespace pipesim::executor
