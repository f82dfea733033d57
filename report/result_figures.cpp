#include "report/result_figures.h"

#include <fmt/format.h>

#include <algorithm>
#include <type_traits>
#include <variant>

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
std::optional<double> tokens_per_device_s(const SimulationResult& r) {
  if (r.seq_len <= 0 || r.spec.devices <= 0) return std::nullopt;
  return r.metrics.throughput_tokens_per_s / (r.spec.devices * r.gpus_per_device);
}
std::optional<double> model_tflops_per_device(const SimulationResult& r) {
  if (r.model_flops_per_sample <= 0 || r.spec.devices <= 0) return std::nullopt;
  return r.metrics.throughput_samples_per_s * r.model_flops_per_sample /
         (r.spec.devices * r.gpus_per_device) / 1e12;
}
std::optional<double> model_flops_utilization(const SimulationResult& r) {
  const std::optional<double> tflops = model_tflops_per_device(r);
  if (!tflops || r.peak_flops_per_device <= 0) return std::nullopt;
  return *tflops * 1e12 / r.peak_flops_per_device;
}
std::string schedule_parameters_text(const SimulationResult& r) {
  std::string text;
  for (const auto& [key, value] : r.schedule_params) {
    const std::string shown = std::visit(
        [](const auto& v) -> std::string {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::vector<int>>) {
            std::string items;
            for (int item : v) items += fmt::format("{}{}", items.empty() ? "" : "/", item);
            return items;
          } else if constexpr (std::is_same_v<T, bool>) {
            return v ? "true" : "false";
          } else {
            return fmt::format("{}", v);
          }
        },
        value);
    text += fmt::format("{}{}={}", text.empty() ? "" : ";", key, shown);
  }
  return text;
}

size_t peak_memory_device(const SimulationResult& r) {
  size_t peak = 0;
  for (size_t d = 0; d < r.memory.devices.size(); ++d) {
    if (r.memory.devices[d].peak_bytes > r.memory.devices[peak].peak_bytes) peak = d;
  }
  return peak;
}
MemoryBreakdown peak_memory_breakdown(const SimulationResult& r) {
  if (r.memory.devices.empty()) return {};
  const DeviceMemory& d = r.memory.devices[peak_memory_device(r)];
  return {d.peak_weight_bytes, d.gradient_bytes, d.optimizer_bytes, d.peak_activation_bytes, d.buffer_bytes};
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
