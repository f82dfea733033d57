#include "executor/replay_executor.h"

#include <numeric>

#include "executor/thread_clock.h"
#include "executor/worker_numerics.h"
#include "sim/engine/engine.h"

namespace pipesim::executor {

ExecutionResult execute_replay(ExecutionPlan& plan, const CostModel& costs, CommModel& comm,
                               const TrainingSetup& setup, const ReplayObserver& observer) {
  use_single_blas_thread();
  ExecutionResult result;
  result.trace = simulate(plan, costs, comm);
  const PipelineLayout& layout = plan.layout;
  const StagedModel model = build_staged_model(setup, layout.stages_per_pipeline());
  std::vector<int> all_stages(layout.stages);
  std::iota(all_stages.begin(), all_stages.end(), 0);
  // One worker over every stage: what a stage sends lands in its own inbox.
  WorkerNumerics* self = nullptr;
  WorkerNumerics numerics(
      model, all_stages, plan, setup,
      [&self](const TensorTag& tag, Matrix<float> tensor) { self->deliver(tag, std::move(tensor)); });
  self = &numerics;
  for (const OpRecord& op : result.trace.ops) {
    const TimeNs cpu_start_ns = thread_cpu_ns();
    const OpReadout readout = numerics.execute(op.action);
    const TimeNs cpu_ns = thread_cpu_ns() - cpu_start_ns;
    Bytes live = 0;
    for (int s : layout.stages_on(op.device)) live += numerics.live_activation_bytes(s);
    result.ops.push_back({op.action, op.device, readout.weight_version, numerics.weights_fingerprint(readout),
                          op.start_ns, op.end_ns, live, cpu_ns});
    if (observer) observer(op, numerics);
  }
  for (int s = 0; s < layout.stages; ++s) {
    result.final_parameters.push_back(numerics.parameters(s));
    result.optimizer_state_bytes.push_back(numerics.optimizer_state_bytes(s));
  }
  result.losses.assign(plan.total_microbatches, 0.0);
  for (const auto& [mb, loss] : numerics.losses()) result.losses[mb] = loss;
  return result;
}

}  // namespace pipesim::executor
