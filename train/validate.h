#pragma once
// `pipesim validate`: the simulator's predictions against the executor's measurements, per schedule.
//
// Each schedule is trained once by the executor: in real mode (one pinned thread per device) when the
// pipeline's devices fit on this machine's allowed cores, otherwise in replay mode on per-op costs measured
// as the thread CPU time of a first pass that runs every op alone on one thread.
// The engine then predicts the same run three ways:
//   fitted        each op draws a duration from the run's own durations of its (kind, stage)
//                 (ResampledCostModel): tests the engine and the schedules;
//   fitted means  each op lasts the mean of its (kind, stage) (MeasuredCostModel): what the spread of op
//                 times costs the pipeline beyond its mean, shown by the gap to `fitted`;
//   cost model    durations = the CPU profile's GEMM table (`pipesim calibrate --cpu`) over the model's
//                 GEMMs: tests the cost model.
// Both predictions take per-microbatch activation bytes from the run itself, so the activation peaks test
// the engine's accounting. Metrics are computed the same way from the executor's ops and the engine's.
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cost_models/hardware_profile.h"
#include "train/execute.h"

namespace pipesim {

struct MeasuredMetrics {
  double makespan_ms = 0;
  double throughput_samples_per_s = 0;
  double bubble = 0;                     // 1 - busy time / (devices x makespan)
  std::vector<int> max_drift_per_stage;  // largest Δ = v(B or I) - v(F) per stage
  int peak_in_flight = 0;                // most microbatches forwarded but not yet backwarded on a device
  Bytes peak_activation_bytes = 0;       // over devices
};

struct ScheduleValidation {
  std::string schedule;
  std::string mode;  // real or replay
  MeasuredMetrics measured;
  MeasuredMetrics fitted;
  MeasuredMetrics fitted_means;
  MeasuredMetrics cost_model;
  bool drift_exact = false;    // the fitted prediction's Δ equals the run's for every (stage, microbatch)
  double drift_agreement = 0;  // the fraction of (stage, microbatch) whose Δ the two agree on
};

struct ValidationOptions {
  executor::TrainingSetup setup;
  std::string profile = "cpu-vm";  // name in gpu_calibration/profiles/ or a path
};

struct ValidationReport {
  std::string scenario;
  std::vector<ScheduleValidation> schedules;
};

ScheduleValidation validate_schedule(const Scenario& scenario, const ScheduleRequest& request,
                                     const ValidationOptions& options, const HardwareProfile& profile);

// Δ = v(B or I) - v(F) per (stage, microbatch).
using DriftPerMicrobatch = std::map<std::pair<int, int>, int>;
// Of the (stage, microbatch) pairs either side holds, the fraction whose Δ both give (1 when both are empty).
double drift_agreement(const DriftPerMicrobatch& predicted, const DriftPerMicrobatch& measured);

// 100 |predicted - measured| / measured; 0 when both are 0.
double percent_error(double predicted, double measured);

}  // namespace pipesim
