#include "report/report.h"

#include <fmt/format.h>

#include <algorithm>

#include "io/scenario.h"
#include "report/csv.h"
#include "report/format.h"
#include "report/result_figures.h"

namespace pipesim {
bool has_batch_bubble(const SimulationResult& r) {
  return r.spec.sync != OptimizerSync::kNone;
}

std::optional<bool> fits_memory(const SimulationResult& r) {
  if (r.memory_capacity_bytes <= 0) return std::nullopt;
  return static_cast<double>(r.memory.peak_bytes()) <= r.memory_capacity_bytes;
}

std::vector<std::string> csv_header() {
  return {"label",
          "sync",
          "devices",
          "microbatches",
          "microbatch_size",
          "batches_requested",
          "batches_simulated",
          "period_ms",
          "throughput_samples_per_s",
          "throughput_tokens_per_s",
          "throughput_samples_per_gpu_s",
          "bubble_fraction",
          "bubble_rate_zb",
          "makespan_ms",
          "critical_path_ms",
          "peak_memory_bytes",
          "fits",
          "peak_weight_bytes",
          "peak_activation_bytes",
          "peak_activation_microbatches",
          "peak_in_flight",
          "simulated_ops",
          "drift_max",
          "drift_bound",
          "staleness_max",
          "weight_versions_max",
          "global_batch",
          "schedule_parameters",
          "throughput_tokens_per_gpu_s",
          "model_tflops_per_gpu",
          "mfu",
          "memory_capacity_bytes",
          "memory_breakdown_device",
          "memory_breakdown_weight_bytes",
          "memory_breakdown_gradient_bytes",
          "memory_breakdown_optimizer_bytes",
          "memory_breakdown_activation_bytes",
          "memory_breakdown_buffer_bytes"};
}

std::vector<std::string> csv_row(const SimulationResult& r) {
  const RunMetrics& m = r.metrics;
  auto optional_cell = [](auto value, const char* format) {
    return value ? fmt::format(fmt::runtime(format), *value) : std::string();
  };
  const std::optional<bool> fits = fits_memory(r);
  const MemoryBreakdown breakdown = peak_memory_breakdown(r);
  return {csv_escape(r.label),
          name_in(sync_names(), r.spec.sync),
          fmt::format("{}", r.spec.devices),
          fmt::format("{}", r.spec.microbatches),
          fmt::format("{}", r.microbatch_size),
          fmt::format("{}", r.batches_requested),
          fmt::format("{}", r.spec.batches),
          fmt::format("{:.6f}", ns_to_ms(m.period_ns)),
          fmt::format("{:.6f}", m.throughput_samples_per_s),
          optional_cell(tokens_per_s(r), "{:.3f}"),
          fmt::format("{:.6f}", m.throughput_samples_per_gpu_s),
          fmt::format("{:.6f}", m.bubble_fraction),
          optional_cell(zb_bubble_rate(r), "{:.6f}"),
          fmt::format("{:.6f}", ns_to_ms(m.makespan_ns)),
          optional_cell(critical_path_ms(r), "{:.6f}"),
          fmt::format("{}", r.memory.peak_bytes()),
          fits ? (*fits ? "true" : "false") : "",
          optional_cell(max_peak_weight_bytes(r), "{}"),
          fmt::format("{}", max_peak_activation_bytes(r)),
          fmt::format("{:.4f}", max_peak_activation_microbatches(r)),
          fmt::format("{}", max_peak_in_flight(r)),
          fmt::format("{}", m.simulated_ops),
          fmt::format("{}", max_drift(r)),
          fmt::format("{}", max_drift_bound(r)),
          fmt::format("{}", max_staleness(r)),
          fmt::format("{}", max_weight_versions(r)),
          fmt::format("{}", global_batch_samples(r)),
          csv_escape(schedule_parameters_text(r)),
          optional_cell(tokens_per_device_s(r), "{:.3f}"),
          optional_cell(model_tflops_per_device(r), "{:.3f}"),
          optional_cell(model_flops_utilization(r), "{:.6f}"),
          r.memory_capacity_bytes > 0 ? fmt::format("{:.0f}", r.memory_capacity_bytes) : "",
          fmt::format("{}", peak_memory_device(r) + 1),
          fmt::format("{}", breakdown.weight_bytes),
          fmt::format("{}", breakdown.gradient_bytes),
          fmt::format("{}", breakdown.optimizer_bytes),
          fmt::format("{}", breakdown.activation_bytes),
          fmt::format("{}", breakdown.buffer_bytes)};
}

std::string results_to_csv(const std::vector<SimulationResult>& results) {
  auto join = [](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + cells[i];
    return line + "\n";
  };
  // The schedule's registry name first, as in `pipesim sweep`'s CSV.
  std::vector<std::string> header = csv_header();
  header.insert(header.begin(), "schedule_name");
  std::string out = join(header);
  for (const auto& r : results) {
    std::vector<std::string> row = csv_row(r);
    row.insert(row.begin(), csv_escape(r.schedule_name));
    out += join(row);
  }
  return out;
}

}  // namespace pipesim
