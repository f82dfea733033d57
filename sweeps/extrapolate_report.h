#pragma once
// The documents of `pipesim extrapolate` (sweeps/extrapolate.h): its CSV, its Markdown report and its
// terminal summary.
#include <string>

#include "sweeps/extrapolate.h"

namespace pipesim {

// Exactly these columns: model, stages, microbatch_size, microbatches, schedule,
// throughput_samples_per_gpu_s, peak_memory_gb, bubble_fraction, drift_max,
// measured_throughput_samples_per_gpu_s, measured_memory_gb.
std::string extrapolation_csv(const Extrapolation& e);
// Per model: one table per m with predicted, measured and predicted/measured; a summary of the ratios.
std::string extrapolation_markdown(const Extrapolation& e);
// For the terminal: per (model, m), throughput and memory of each schedule, ratios where measured.
std::string extrapolation_summary(const Extrapolation& e);

}  // namespace pipesim
