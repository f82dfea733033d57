#pragma once
// Paired per-seed gaps: a schedule's held-out loss minus that of the flush it is paired with, seed by seed
// (the same seed draws the same weights and samples), at every evaluation point both curves have; and the
// noise floor, the same gap between two flushes that compute the same thing (another m at the same B).
#include <cstdint>
#include <string>
#include <vector>

#include "train/study_runner.h"

namespace pipesim {

struct PairedGap {
  int global_batch = 0;
  std::string schedule;               // label
  std::string optimizer;              // label
  std::string correction;             // name
  std::string reference_schedule;     // the flush it is paired with (label)
  bool noise_floor = false;           // two flushes: the gap of computing the same thing another way
  int delta_max = 0;                  // the schedule's largest weight-version drift Δ (largest_delays)
  int tau_max = 0;                    // and its largest gradient staleness τ
  std::vector<std::uint64_t> seeds;   // seeds both groups ran
  std::vector<std::int64_t> samples;  // the points both curves have
  std::vector<std::int64_t> reference_steps;     // the flush's optimizer steps at those points
  std::vector<std::vector<double>> gap_by_seed;  // [seed][point]: val loss minus the flush's, nats
  double final_mean = 0;                         // the last point's gap, mean over seeds
  double final_sd = 0;                           // its sample standard deviation (0 for one seed)
};

// Every non-flush group of the comparison (asynchronous schedules and delay masks) paired with the plain
// 1F1B-flush at the same B, optimizer and N: the one with its m, else the first listed; then the noise floor
// for each pair of plain flushes at the same B and optimizer with different m. Groups without a flush or
// without a seed in common are left out. A schedule that steps on fewer microbatches than its batch
// (PipeDream, async 1F1B, PACI a < m) pairs with its step-rate baseline instead when the study adds one
// (same_step_rate_flush).
std::vector<PairedGap> paired_gaps(const Study& study, const StudyCurves& curves);

// Markdown table (empty when there is no pair) and the CSV the plot reads (one row per group, seed, point).
std::string format_paired_gap_table(const std::vector<PairedGap>& gaps);
std::string paired_gap_csv(const std::vector<PairedGap>& gaps);

}  // namespace pipesim
