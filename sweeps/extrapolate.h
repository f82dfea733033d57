#pragma once
// `pipesim extrapolate`: every schedule on the Zero Bubble paper's four models (1.5B-28.3B) at each of their
// m, predicted with the transformer model on a hardware profile, beside the paper's measurements and the PACI
// paper's own method (measured 1F1B throughput × (m+N−1)/m, at 1F1B's memory).
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "sim/limits.h"

namespace pipesim {

struct ExtrapolateOptions {
  std::string data_dir;                    // the zb_*.csv files
  std::string profile = "a100-sxm4-80gb";  // name or path
  int batches = 4;                         // batches simulated per run (the stream length of async schedules)
  std::vector<std::string> models;         // empty: all of zb_models.csv
  // false: transfers overlap compute (the profile's link); true: they hold both devices' compute streams, as
  // Megatron's blocking p2p does (sim/comm_model.h).
  bool blocking_comm = false;
  Limits limits;  // each run's ceilings (sim/limits.h)
};

// One schedule on one (model, m). Predicted values are empty when the schedule could not run (see `error`);
// measured ones are empty where nothing was published. Memory in GiB (2^30 bytes), as every pipesim table.
struct ExtrapolationRow {
  std::string model;
  int stages = 0, microbatch_size = 0, microbatches = 0;
  std::string schedule;  // registry name; paci runs with a = m, interleaved-1f1b with one layer per chunk
  int interleaved_chunks = 0;  // v of interleaved-1f1b on this model: (layers + 2) / N
  std::optional<double> throughput_samples_per_gpu_s, peak_memory_gib, bubble_fraction;
  std::optional<int> drift_max, drift_bound;
  std::optional<double> measured_throughput_samples_per_gpu_s, measured_memory_gib;
  std::string error;
};

struct Extrapolation {
  std::string profile_source;
  double memory_capacity_gib = 0;  // 0: the profile does not say
  bool blocking_comm = false;
  std::vector<ExtrapolationRow> rows;
};

// The row name of the PACI paper's method: measured 1F1B-flush throughput × (m+N−1)/m, at 1F1B-flush's
// memory.
inline constexpr const char* kPaciPaperMethod = "paci-paper-method";

Extrapolation run_extrapolation(const ExtrapolateOptions& options,
                                const std::function<void(const std::string&)>& progress);

}  // namespace pipesim
