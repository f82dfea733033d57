#pragma once
// `pipesim execute`: train the teacher model under a scenario's schedules with the executor (executor/), in
// replay or real mode, and summarise each run.
#include <string>

#include "executor/execution_result.h"
#include "executor/replay_executor.h"
#include "executor/training_setup.h"
#include "io/scenario.h"
#include "schedules/guarantees.h"
#include "schedules/schedule.h"
#include "sim/limits.h"
#include "train/numerics_dump.h"

namespace pipesim {

enum class ExecuteMode { kReplay, kReal };
enum class ExecuteTransport { kThreads, kMpi };  // real mode only; mpi needs a build with MPI and mpiexec

struct ExecuteOptions {
  Limits limits;  // the run's ceilings (sim/limits.h), checked before anything is allocated
  ExecuteMode mode = ExecuteMode::kReplay;
  ExecuteTransport transport = ExecuteTransport::kThreads;
  // From the scenario's `executor:` section (executor/scenario_training.h) and the command line;
  // microbatches_per_batch is taken from the scenario.
  executor::TrainingSetup setup;
  executor::ReplayObserver observer = {};  // replay mode: sees every op after it ran
  // Replay mode: true, the virtual clocks advance by each op's own measured thread CPU time (a first pass
  // measures them, the second replays on them; `pipesim execute`'s default); false, by the scenario's costs
  // (deterministic timestamps, one pass).
  bool measured_clock = false;
  // Replay mode on the scenario's clock: also time the executed ops at their own measured thread CPU times on
  // the same plan, transfers free (each device a core of this machine): ExecutedSchedule::measured_pipeline.
  bool measured_pipeline = false;
  // Held-out evaluations: every this many batches and after the last (0: after the last only; -1: none).
  // Real mode evaluates the final weights only.
  int eval_every_batches = -1;
  int validation_samples = 256;
  // Stages that take a one-step-delayed gradient (a study's delay mask; synchronous schedules only): empty
  // for none, else one flag per stage of the schedule's layout.
  std::vector<bool> one_step_delayed;
  // Replay mode: the initial weights, the microbatches and the weights after chosen steps as .npy files
  // (train/numerics_dump.h).
  NumericsDumpOptions dump;
};

// A held-out evaluation along a run: after the forward of batch `batch`'s last microbatch on the last stage,
// every stage's newest weights (or the final weights, batch = batches - 1, in real mode).
struct RunEvaluation {
  int batch = 0;
  double loss = 0;
  double accuracy = 0;
};

struct ExecutedSchedule {
  std::string label;  // the display label (schedule and parameters), as a run's result has it
  ExecuteMode mode = ExecuteMode::kReplay;
  PipelineSpec spec;
  int virtual_stages = 0;  // layout.stages: devices x chunks
  PipelineLayout layout;
  executor::TrainingSetup setup;  // as the run used it (training_setup_for)
  WeightGuarantees guarantees;    // what the schedule promises, per stage
  executor::ExecutionResult result;
  std::vector<RunEvaluation> evaluations;  // in batch order
  // ExecuteOptions::measured_pipeline: the plan timed on the ops' measured CPU times (else empty).
  RunTrace measured_pipeline;
};

// The setup a run uses: m from the scenario, at least one model unit per (virtual) stage.
executor::TrainingSetup training_setup_for(const executor::TrainingSetup& given, const Scenario& scenario,
                                           const PipelineLayout& layout);

// The model gets at least one unit per (virtual) stage: more residual blocks when the pipeline needs them.
// What training a model under a schedule takes, estimated before anything is allocated: FLOPs (6 per
// parameter and token) and bytes (weights, gradients, optimizer state, a weight version per device at most, a
// batch of activations). Within a small factor.
struct ExecutionEstimate {
  double flops = 0;
  double bytes = 0;
  double ops = 0;  // F, B/I, W and U ops executed
};
ExecutionEstimate estimate_execution(const executor::TrainingSetup& setup, const PipelineSpec& spec,
                                     const PipelineLayout& layout);
// Throws ResourceLimitError, with the estimate and the flag that raises the ceiling, above --max-memory-gb,
// --max-tflop or (an executed op counted as 100 simulated ones) --max-ops.
void check_execution_resources(const ExecutionEstimate& estimate, const std::string& where,
                               const Limits& limits);

ExecutedSchedule execute_schedule(const Scenario& scenario, const ScheduleRequest& request,
                                  const ExecuteOptions& options);

}  // namespace pipesim
