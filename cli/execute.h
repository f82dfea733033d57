#pragma once
// `pipesim execute`: train the teacher model under a scenario's schedules with the executor (executor/), in
// replay or real mode, and summarise each run.
#ifdef PIPESIM_HAS_EXECUTOR
#include <nlohmann/json.hpp>
#include <string>

#include "executor/execution_result.h"
#include "executor/replay_executor.h"
#include "executor/training_setup.h"
#include "scenarios/scenario.h"
#include "schedules/schedule.h"

namespace pipesim {

enum class ExecuteMode { kReplay, kReal };

struct ExecuteOptions {
  ExecuteMode mode = ExecuteMode::kReplay;
  executor::TrainingSetup setup;           // microbatches_per_batch is taken from the scenario
  executor::ReplayObserver observer = {};  // replay mode: sees every op after it ran
};

struct ExecutedSchedule {
  std::string schedule;  // label
  ExecuteMode mode = ExecuteMode::kReplay;
  PipelineSpec spec;
  int stages = 0;
  executor::ExecutionResult result;
};

// The model gets at least one unit per (virtual) stage: more residual blocks when the pipeline needs them.
ExecutedSchedule execute_schedule(const Scenario& scenario, const ScheduleRequest& request,
                                  const ExecuteOptions& options);

// Per run: makespan, mean loss of the first and last batch, per-stage largest drift, per-device peak of live
// activation bytes.
nlohmann::json execution_summary(const ExecutedSchedule& run);

}  // namespace pipesim
#endif
