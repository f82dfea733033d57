#pragma once
// What a schedule promises about weight versions, per stage. Reports print it beside the values measured on
// the trace (analysis/drift.h), and `pipesim check` verifies it on randomised runs.
#include <vector>

namespace pipesim {

// The defaults are a synchronous schedule's: Δ = τ = 0 and one weight copy.
struct StageGuarantee {
  int drift_bound = 0;  // Δ ≤ this on every microbatch, with the schedule's parameters
  int invariant_drift_bound =
      0;  // the published invariant `pipesim check` enforces (PACI: ⌈(N−i)/a⌉ for any L_i)
  int staleness_bound = 0;    // τ ≤ this
  int steady_staleness = -1;  // τ equals this for every microbatch after the first batch; -1: no such promise
  int weight_versions = 1;    // live weight versions ≤ this
  int max_in_flight = 0;      // in-flight microbatches ≤ this; 0: no promise
  // Lower bounds once the pipeline is saturated (uniform exact costs, each stage reaching its in-flight
  // limit):
  bool drift_max_reached = false;    // Δ max equals drift_bound
  double saturated_drift_mean = -1;  // mean Δ over a window of whole a-cycles equals this; -1: no promise
  bool weight_versions_reached = false;  // live weight versions reach weight_versions
};

using WeightGuarantees = std::vector<StageGuarantee>;  // per (virtual) stage, 0-based

}  // namespace pipesim
