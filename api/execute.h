#pragma once
// `pipesim execute`: train the teacher model under a scenario's schedules with the executor (executor/), in
// replay or real mode, and summarise each run.
#ifdef PIPESIM_HAS_EXECUTOR
#include <string>

#include "executor/execution_result.h"
#include "executor/training_setup.h"
#include "io/scenario.h"
#include "schedules/schedule.h"

namespace pipesim {

enum class ExecuteMode { kReplay, kReal };

struct ExecuteOptions {
  ExecuteMode mode = ExecuteMode::kReplay;
  executor::TrainingSetup setup;  // microbatches_per_batch is taken from the scenario
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

}  // namespace pipesim
#endif
