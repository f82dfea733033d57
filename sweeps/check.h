#pragma once
// `pipesim check`: runs schedules over a grid of pipeline shapes and seeds with random durations (jitter,
// heterogeneous stage speeds, stragglers) and verifies each schedule's weight-version guarantees
// (schedules/guarantees.h) on every stage and microbatch, as measured by analysis/drift.h.
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "api/simulation.h"
#include "cost_models/noisy_costs.h"
#include "sim/limits.h"

namespace pipesim {

struct CheckOptions {
  std::vector<std::string> schedules;  // registered names for the grid; empty: every registered schedule
  std::vector<int> stages = {2, 3, 4, 6, 8, 12, 16, 24, 32};
  // Terms in N: "4", "N", "N-1", "2N".
  std::vector<std::string> microbatches = {"1", "2", "3", "4", "8", "16", "N-1", "N", "2N"};
  std::vector<std::string> accumulation = {"1", "2", "3", "4", "8", "16", "N-1", "N", "2N"};
  int seeds = 10;  // seed 0 runs the costs as given; the others add the noise below
  NoiseSpec noise{0, 0.3, 0.3, 0.02, 5.0};
  int threads = 0;  // 0: every core
  Limits limits;    // each run's ceilings, and the check's in all (sim/limits.h)
};

// One broken guarantee, at the first (stage, microbatch) where it broke in its run.
struct Violation {
  std::string schedule;  // label, with parameters
  int stages = 0;
  int microbatches = 0;
  int accumulation = 0;  // 0: the schedule has no such parameter
  int seed = 0;
  int stage = 0;        // 0-based
  int microbatch = -1;  // -1: a per-stage figure (weight versions, in flight) or a failed run
  std::string what;     // "Δ", "τ", "weight versions", "in flight", or "run failed: ..."
  int value = 0;
  int bound = 0;
  std::string bound_name;   // which guarantee, e.g. "the invariant ⌈(N−i)/a⌉"
  bool must_equal = false;  // the value had to equal the bound, not only stay below it
  bool general_bound_check =
      false;               // this is the schedule's general bound where it differs from the invariant
  int general_bound = 0;   // the general drift bound of that stage
  std::string value_text;  // when set, printed instead of value and bound (e.g. a mean)
  std::string bound_text;

  auto key() const { return std::tie(stages, microbatches, accumulation, seed, stage, microbatch); }
};

struct ScheduleCheckSummary {
  std::string schedule;
  long runs = 0;
  long skipped = 0;  // grid points the schedule does not allow
  long failed_runs = 0;
  bool general_bound_differs = false;  // e.g. PACI with a non-default max_in_flight
  long general_bound_broken_runs = 0;
};

struct CheckReport {
  std::string grid;  // what was checked, one line
  std::vector<ScheduleCheckSummary> schedules;
  long runs = 0;
  long failed_runs = 0;
  std::optional<Violation> smallest;  // by (N, m, a, seed, stage, microbatch)
  bool passed() const { return failed_runs == 0; }
};

// The violations of one run, each guarantee at its first (stage, microbatch). `saturated`: the costs are
// exact and uniform, so the lower bounds (a saturated pipeline reaches its Δ and version bounds, PACI's mean
// Δ is (N−i)/a) are checked too.
std::vector<Violation> check_run(const SimulationResult& result, int accumulation, int seed,
                                 bool saturated = false);

CheckReport check_grid(const CheckOptions& options);
// The scenario's schedules with its costs, over options.seeds seeds.
CheckReport check_scenario(const Scenario& scenario, const CheckOptions& options);

// "2N" with N = 4 -> 8; throws InputError for anything but an integer, N, kN, N-k or N+k.
int evaluate_term(const std::string& term, int n);

}  // namespace pipesim
