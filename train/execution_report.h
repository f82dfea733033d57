#pragma once
// What `pipesim execute` writes about an executed run, computed from the run itself:
//   - the run as a SimulationResult (measured_result): its ops, with the times and weight versions the
//     executor recorded, go through the simulator's own analyses (metrics, drift, memory), so the executed
//     and the simulated run share the table, the JSON record and the Perfetto trace format and open side by
//     side;
//   - its training curve: per optimizer step (a batch of m microbatches), the samples so far, the time the
//     batch's last op ended (wall clock in real mode, the virtual clock in replay), the mean training loss of
//     its microbatches and the held-out loss and accuracy where the run evaluated.
#include <optional>
#include <string>
#include <vector>

#include "analysis/run_result.h"
#include "train/execute.h"

namespace pipesim {

// The executed ops as the engine would have recorded them: start order, times from the run's first op,
// activation samples at each op's end (what the executor measured), microbatches in flight from F's start to
// the end of its B or I.
RunTrace executed_trace(const ExecutedSchedule& run);

// A run's figures over the whole of its trace, for an executed run and for a simulation of the same run
// alike (`pipesim validate` compares the two): throughput = samples / makespan, period = makespan / batches,
// bubble = 1 - busy / (devices x makespan), drift over every microbatch. No memory beyond the trace's.
SimulationResult whole_run_result(RunTrace trace, const PipelineSpec& spec, int microbatch_size,
                                  const std::string& label);

// Figures over the whole run (an executor cannot run on to a steady state): throughput = samples / makespan,
// period = makespan / batches, bubble = 1 - busy / (devices x makespan), drift means over every microbatch.
// Memory: every stage's real parameter count as weights and gradients, the optimizer's real state.
SimulationResult measured_result(const ExecutedSchedule& run);

struct TrainingStep {
  int step = 0;  // 0-based batch
  long long samples = 0;
  double time_s = 0;  // from the run's first op
  double train_loss = 0;
  std::optional<double> val_loss;
  std::optional<double> val_accuracy;
};

std::vector<TrainingStep> training_curve(const ExecutedSchedule& run);

// Header `schedule,step,samples,time_s,clock,train_loss,val_loss,val_accuracy`; empty cells where the run did
// not evaluate; clock is `wall` (real mode) or `virtual` (replay).
std::string training_curve_csv_header();
std::string training_curve_csv_rows(const ExecutedSchedule& run);

}  // namespace pipesim
