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
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "executor/costs/machine_drift.h"
#include "sim/limits.h"
#include "spec/hardware_profile.h"
#include "train/execute.h"

namespace pipesim {

struct MeasuredMetrics {
  double makespan_ms = 0;
  double throughput_samples_per_s = 0;
  double bubble = 0;  // 1 - busy time / (devices x makespan)
  std::vector<int>
      max_drift_per_stage;  // largest Δ per stage (analysis/drift.h: gradient ops' version - F's)
  int peak_in_flight = 0;   // most microbatches on a device from their F's start to their B's or I's end
  Bytes peak_activation_bytes = 0;  // over devices
};

// Per (stage, op kind): the run's mean op time against the cost model's, so that the next error of the cost
// model can be read off directly.
struct OpTimeComparison {
  int stage = 0;
  OpKind kind = OpKind::F;
  int count = 0;
  double measured_mean_ms = 0;   // wall time (real mode) or the measured thread CPU time (replay)
  double predicted_mean_ms = 0;  // the cost model's, over the same ops
  double overhead_mean_ms = 0;   // real mode: the executor's own time per op (choosing it, transport)
  double preempted_share = 0;    // real mode: 1 - thread CPU time / wall time over these ops
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
  std::vector<OpTimeComparison> op_times;       // by stage, then kind
  std::vector<std::string> cost_model_missing;  // what the profile lacked (CpuProfileCosts::missing_terms)
  // Real mode: the share of the ops' wall time their threads did not run (preempted by other work on the
  // machine): measured times then say as much about the machine's load as about the schedule.
  double preempted_share = 0;
  int runs = 1;                // the runs of this schedule this report is the median of
  double makespan_spread = 0;  // (largest - smallest) / median of those runs' measured makespans
};

struct ValidationOptions {
  executor::TrainingSetup setup;
  std::string profile = "cpu-vm";  // name in share/profiles/ or a path
  // Multiplies every cost-model duration: 1 / the machine's speed against the profile when the prediction
  // is rescaled to a probe taken before the runs (--rescale-to-probe), else 1.
  double cost_model_time_scale = 1;
  Limits limits;  // the run's ceilings (sim/limits.h)
};

struct ValidationReport {
  std::string scenario;
  std::vector<ScheduleValidation> schedules;
  std::string profile;                          // the cost model's profile: file, device, date
  std::vector<std::string> profile_mismatches;  // profile_mismatches(): another machine's figures
  double max_preempted_share = 0.05;            // above it, a schedule's timing is not trusted
  // The machine's speed against the profile just before and just after the runs (CPU profiles; absent when
  // not probed), and whether the cost model was rescaled to the first.
  std::optional<MachineSpeed> speed_before, speed_after;
  bool rescaled_to_probe = false;
  static constexpr double kSpeedTolerance = 0.05;  // beyond it, the machine's drift is named as an error
  // The largest preempted share over the schedules, and whether it is within max_preempted_share.
  double worst_preempted_share() const;
  bool timing_trusted() const { return worst_preempted_share() <= max_preempted_share; }
};

ScheduleValidation validate_schedule(const Scenario& scenario, const ScheduleRequest& request,
                                     const ValidationOptions& options, const HardwareProfile& profile);
// `runs` runs of validate_schedule; the one of median measured makespan, with the spread over all.
ScheduleValidation validate_schedule_median(const Scenario& scenario, const ScheduleRequest& request,
                                            const ValidationOptions& options, const HardwareProfile& profile,
                                            int runs);

// What makes the cost-model prediction another machine's: a profile of another kind of device, of another
// CPU model or vector extensions than this machine's. Empty when the profile describes this CPU.
std::vector<std::string> profile_mismatches(const HardwareProfile& profile);

// Per (stage, kind) of the run's ops: measured against `costs`. `real_mode`: wall times against thread CPU
// times give the preempted share.
std::vector<OpTimeComparison> compare_op_times(const std::vector<executor::ExecutedOp>& ops,
                                               const CostModel& costs, bool real_mode);
// 1 - Σ thread CPU time / Σ wall time over the ops (0 when there are none).
double preempted_share(const std::vector<executor::ExecutedOp>& ops);

// Δ = v(B or I) - v(F) per (stage, microbatch).
using DriftPerMicrobatch = std::map<std::pair<int, int>, int>;
// Of the (stage, microbatch) pairs either side holds, the fraction whose Δ both give (1 when both are empty).
double drift_agreement(const DriftPerMicrobatch& predicted, const DriftPerMicrobatch& measured);

// 100 |predicted - measured| / measured; 0 when both are 0.
double percent_error(double predicted, double measured);

}  // namespace pipesim
