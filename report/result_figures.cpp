#include "report/result_figures.h"

#include <algorithm>

#include "io/scenario.h"
#include "report/report.h"

namespace pipesim {
namespace {

// Largest over a list of a per-item figure (0 for an empty list).
template <typename T, typename F>
auto max_over(const std::vector<T>& items, F f) -> decltype(f(items.front())) {
  decltype(f(items.front())) peak{};
  for (const T& item : items) peak = std::max(peak, f(item));
  return peak;
}

}  // namespace

std::string sync_token(OptimizerSync sync) {
  // sync_name's "none (async)" is for people; the token is the enum's name.
  return sync == OptimizerSync::kNone ? "none" : sync_name(sync);
}

double global_batch_samples(const SimulationResult& r) {
  return r.spec.microbatches * r.microbatch_size;
}

Bytes max_peak_activation_bytes(const SimulationResult& r) {
  return max_over(r.metrics.devices, [](const DeviceMetrics& d) { return d.peak_activation_bytes; });
}

double max_peak_activation_microbatches(const SimulationResult& r) {
  double peak = 0;
  for (size_t d = 0; d < r.metrics.devices.size(); ++d) {
    const Bytes per_microbatch = r.activation_bytes_per_microbatch[d];
    if (per_microbatch > 0) {
      peak = std::max(peak, static_cast<double>(r.metrics.devices[d].peak_activation_bytes) / per_microbatch);
    }
  }
  return peak;
}

int max_peak_in_flight(const SimulationResult& r) {
  return max_over(r.metrics.devices, [](const DeviceMetrics& d) { return d.peak_in_flight; });
}
int max_drift(const SimulationResult& r) {
  return max_over(r.drift.stages, [](const StageDrift& s) { return s.drift_max; });
}
int max_drift_bound(const SimulationResult& r) {
  return max_over(r.guarantees, [](const StageGuarantee& g) { return g.drift_bound; });
}
int max_staleness(const SimulationResult& r) {
  return max_over(r.drift.stages, [](const StageDrift& s) { return s.staleness_max; });
}
int max_weight_versions(const SimulationResult& r) {
  return max_over(r.drift.stages, [](const StageDrift& s) { return s.weight_versions_max; });
}

std::optional<double> tokens_per_s(const SimulationResult& r) {
  if (r.seq_len <= 0) return std::nullopt;
  return r.metrics.throughput_tokens_per_s;
}
std::optional<double> zb_bubble_rate(const SimulationResult& r) {
  if (!has_batch_bubble(r)) return std::nullopt;
  return r.metrics.bubble_rate_zb;
}
std::optional<double> critical_path_ms(const SimulationResult& r) {
  if (r.trace.ops_run() == 0) return std::nullopt;  // nothing ran, so no path (a streamed run lists no ops)
  return ns_to_ms(r.graph.critical_path_ns);
}
std::optional<Bytes> max_peak_weight_bytes(const SimulationResult& r) {
  if (!r.weight_memory_known) return std::nullopt;
  return max_over(r.memory.devices, [](const DeviceMemory& d) { return d.peak_weight_bytes; });
}

}  // namespace pipesim
