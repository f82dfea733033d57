#pragma once
// What a study's curves say: per group of runs (global batch, schedule, optimizer, correction), over seeds,
// how many seeds reached the targets, the mean samples, predicted time and measured time to get there, the
// spread of the loss over seeds, and the speed-up over the fastest flush.
#include <string>
#include <vector>

#include "train/study_runner.h"

namespace pipesim {

struct GroupSummary {
  std::string group;
  int global_batch = 0;
  std::string schedule;  // label
  std::string optimizer;
  std::string correction;
  bool synchronous = false;
  int seeds = 0;
  int reached = 0;                   // seeds whose validation met every target at some point
  double samples_to_target = 0;      // means over the seeds that reached (NaN when none did)
  double predicted_s_to_target = 0;  // the simulator's clock on the target setting
  double measured_s_to_target = 0;   // the executor's compute time
  double final_val_loss = 0;         // mean over seeds
  double loss_spread = 0;  // root mean square over the evaluation points of the standard deviation over seeds
  // The fastest synchronous group's predicted time to target at the same global batch and optimizer over this
  // group's (NaN when either did not reach).
  double speedup_over_fastest_flush = 0;
};

// The first point of a curve meeting every target, or nullptr.
const CurvePoint* first_at_target(const std::vector<CurvePoint>& points, const StudyTargets& targets);

// Sample standard deviation (n - 1) per point over the seeds' curves, root mean square over the points;
// 0 for a single seed. Curves are cut to the shortest.
double loss_spread(const std::vector<const std::vector<CurvePoint>*>& seed_curves);

std::vector<GroupSummary> summarize_study(const Study& study, const StudyCurves& curves);

// A Markdown table of the summaries.
std::string format_study_table(const Study& study, const std::vector<GroupSummary>& groups);

}  // namespace pipesim
