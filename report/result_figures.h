#pragma once
// One run's summary figures, each the largest over devices or stages, or empty when the run cannot know it:
// what the table, the CSV and the JSON record show (docs/design.md §5, §8).
#include <optional>
#include <string>

#include "analysis/run_result.h"

namespace pipesim {

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
// What Megatron's and torchtitan's logs show per GPU: tokens/s per device, the model's TFLOP/s per device
// (model_flops_per_sample x samples/s / devices; recomputation not counted) and MFU (that over the device's
// peak in the model's dtype). Empty without a transformer model (or the profile's peak).
std::optional<double> tokens_per_device_s(const SimulationResult& r);
std::optional<double> model_tflops_per_device(const SimulationResult& r);
std::optional<double> model_flops_utilization(const SimulationResult& r);
// The schedule's parameters as it ran: "accumulation=4;max_in_flight=5/4/3/2" ("" when it takes none).
std::string schedule_parameters_text(const SimulationResult& r);
// The device whose peak is the run's peak (0-based), and the parts of that peak.
size_t peak_memory_device(const SimulationResult& r);
struct MemoryBreakdown {
  Bytes weight_bytes = 0, gradient_bytes = 0, optimizer_bytes = 0, activation_bytes = 0, buffer_bytes = 0;
};
MemoryBreakdown peak_memory_breakdown(const SimulationResult& r);

}  // namespace pipesim
