#pragma once
// What a study's curves say: per group of runs (global batch, schedule, optimizer, correction), over seeds,
// how many seeds reached each target, the mean samples, steps, predicted time and measured time to get
// there (interpolated between evaluation points), the spread of the loss over seeds, and the speed-up over
// the fastest flush.
#include <optional>
#include <string>
#include <vector>

#include "train/study_runner.h"

namespace pipesim {

// Where a curve first meets a target, linear in the target's metric between the last point that missed it
// and the first that met it (a curve that starts at the target crosses at its first point).
struct TargetCrossing {
  double samples = 0;
  double steps = 0;
  double predicted_s = 0;
  double measured_s = 0;
  double pipelined_s = 0;
};
std::optional<TargetCrossing> first_crossing(const std::vector<CurvePoint>& points,
                                             const StudyTarget& target);

struct TargetSummary {
  int reached = 0;                   // seeds whose curve met the target
  double samples_to_target = 0;      // means over the seeds that reached (NaN when none did)
  double steps_to_target = 0;        // optimizer steps
  double predicted_s_to_target = 0;  // the simulator's clock on the target setting
  double measured_s_to_target = 0;   // the executor's compute time
  double pipelined_s_to_target = 0;  // the replay's pipelined time on its measured op costs (NaN: not kept)
  // The fastest synchronous group's predicted time to the target at the same global batch, optimizer and N
  // over this group's (NaN unless both reached with every seed).
  double speedup_over_fastest_flush = 0;
};

struct GroupSummary {
  std::string group;
  int global_batch = 0;
  std::string schedule;  // label
  std::string optimizer;
  std::string correction;
  bool synchronous = false;
  int stages = 0;  // N
  int seeds = 0;
  std::vector<TargetSummary> targets;  // one per study target, in the study's order (the first leads)
  double final_val_loss = 0;           // mean over seeds
  double loss_spread = 0;  // root mean square over the evaluation points of the standard deviation over seeds
  double learning_rate = 0;       // the optimizer's, as the study gives it (before any step-batch scaling)
  bool swept = false;             // a swept schedule at one rate of a sweep
  bool best_for_schedule = true;  // summarize_lr_sweep: this schedule's lowest mean final loss over rates
  bool chosen = false;            // summarize_lr_sweep: the rate the other schedules train at
};

// Sample standard deviation (n - 1) per point over the seeds' curves, root mean square over the points;
// 0 for a single seed. Curves are cut to the shortest.
double loss_spread(const std::vector<const std::vector<CurvePoint>*>& seed_curves);

// The comparison: every group at its optimizer's chosen rate (a sweep's other rates left to the sweep table).
std::vector<GroupSummary> summarize_study(const Study& study, const StudyCurves& curves);
// The swept schedules at every rate of a sweep, with each schedule's best rate and the chosen one marked.
std::vector<GroupSummary> summarize_lr_sweep(const Study& study, const StudyCurves& curves);
// Markdown; empty without a sweep.
std::string format_lr_sweep_table(const Study& study, const std::vector<GroupSummary>& groups);

// Markdown: the leading target's table, then (with several targets) the predicted time to each.
std::string format_study_table(const Study& study, const std::vector<GroupSummary>& groups);

}  // namespace pipesim
