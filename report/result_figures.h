#pragma once
// One run's summary figures, each the largest over devices or stages, or empty when the run cannot know it:
// what the table, the CSV and the JSON record show (docs/design.md §5, §8).
#include <optional>
#include <string>

#include "analysis/run_result.h"

namespace pipesim {

// The optimizer synchronisation as a token: "barrier", "post-validation" or "none" (asynchronous schedules).
std::string sync_token(OptimizerSync sync);

// Microbatches per batch (m), samples per microbatch (b; a mean when B does not split evenly) and B = m x b.
double global_batch_samples(const SimulationResult& r);

Bytes max_peak_activation_bytes(const SimulationResult& r);
// Peak activations in units of the device's per-microbatch activations (M_B), the largest over devices.
double max_peak_activation_microbatches(const SimulationResult& r);
int max_peak_in_flight(const SimulationResult& r);
int max_drift(const SimulationResult& r);
int max_drift_bound(const SimulationResult& r);
int max_staleness(const SimulationResult& r);
int max_weight_versions(const SimulationResult& r);

// Empty when the figure does not apply or is unknown.
std::optional<double> tokens_per_s(const SimulationResult& r);          // needs the sequence length
std::optional<double> zb_bubble_rate(const SimulationResult& r);        // needs batches that flush
std::optional<double> critical_path_ms(const SimulationResult& r);      // empty when no op ran
std::optional<Bytes> max_peak_weight_bytes(const SimulationResult& r);  // needs the weights' size

}  // namespace pipesim
