#include "report/report.h"

#include <fmt/format.h>

#include <algorithm>

#include "io/scenario.h"
#include "report/format.h"

namespace pipesim {
namespace {

template <typename T, typename F>
std::vector<T> per_device(const SimulationResult& r, F f) {
  std::vector<T> values;
  for (const DeviceMetrics& d : r.metrics.devices) values.push_back(f(d));
  return values;
}

Bytes max_peak_bytes(const SimulationResult& r) {
  Bytes peak = 0;
  for (const auto& d : r.metrics.devices) peak = std::max(peak, d.peak_activation_bytes);
  return peak;
}

// Peak activation memory in units of the device's per-microbatch activations (M_B), the largest over devices.
double max_peak_microbatches(const SimulationResult& r) {
  double peak = 0;
  for (size_t d = 0; d < r.metrics.devices.size(); ++d) {
    const Bytes per_microbatch = r.activation_bytes_per_microbatch[d];
    if (per_microbatch > 0) {
      peak = std::max(peak, static_cast<double>(r.metrics.devices[d].peak_activation_bytes) / per_microbatch);
    }
  }
  return peak;
}

int max_in_flight(const SimulationResult& r) {
  int peak = 0;
  for (const auto& d : r.metrics.devices) peak = std::max(peak, d.peak_in_flight);
  return peak;
}

// Largest over stages of a per-stage figure.
template <typename T, typename F>
int max_over(const std::vector<T>& stages, F f) {
  int peak = 0;
  for (const T& s : stages) peak = std::max(peak, f(s));
  return peak;
}

int drift_max(const SimulationResult& r) {
  return max_over(r.drift.stages, [](const StageDrift& s) { return s.drift_max; });
}
int drift_bound(const SimulationResult& r) {
  return max_over(r.guarantees, [](const StageGuarantee& g) { return g.drift_bound; });
}
int staleness_max(const SimulationResult& r) {
  return max_over(r.drift.stages, [](const StageDrift& s) { return s.staleness_max; });
}
int weight_versions_max(const SimulationResult& r) {
  return max_over(r.drift.stages, [](const StageDrift& s) { return s.weight_versions_max; });
}

nlohmann::ordered_json drift_to_json(const SimulationResult& r) {
  nlohmann::ordered_json stages = nlohmann::ordered_json::array();
  for (size_t i = 0; i < r.drift.stages.size(); ++i) {
    const StageDrift& s = r.drift.stages[i];
    stages.push_back({{"stage", i + 1},
                      {"max", s.drift_max},
                      {"mean", s.drift_mean},
                      {"bound", i < r.guarantees.size() ? r.guarantees[i].drift_bound : 0},
                      {"staleness_max", s.staleness_max},
                      {"staleness_mean", s.staleness_mean},
                      {"weight_versions_max", s.weight_versions_max},
                      {"in_flight_max", s.in_flight_max},
                      {"histogram", s.drift_histogram}});
  }
  return stages;
}

}  // namespace

std::string csv_escape(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

bool has_batch_bubble(const SimulationResult& r) {
  return r.spec.sync != OptimizerSync::kNone;
}

std::optional<bool> fits_memory(const SimulationResult& r) {
  if (r.memory_capacity_bytes <= 0) return std::nullopt;
  return static_cast<double>(r.memory.peak_bytes()) <= r.memory_capacity_bytes;
}

std::string render_results_table(const std::string& scenario_name,
                                 const std::vector<SimulationResult>& results) {
  if (results.empty()) return "";
  const SimulationResult& first = results.front();
  const bool tokens = first.seq_len > 0;
  // m and b go in the header only when every run shares them (scenario entries may set their own pipeline).
  bool shared_shape = true;
  for (const SimulationResult& r : results) {
    shared_shape = shared_shape && r.spec.microbatches == first.spec.microbatches &&
                   r.microbatch_size == first.microbatch_size;
  }
  const std::string shape = shared_shape ? fmt::format(", m={} microbatches of {:g} sample(s)",
                                                       first.spec.microbatches, first.microbatch_size)
                                         : ", m and b per row";
  // Each run simulates at least the requested batches, as many more as its steady state needs (column
  // "batches").
  std::string out = fmt::format("scenario {}: N={} stages{}, at least {} batches per run\n\n", scenario_name,
                                first.spec.devices, shape, first.batches_requested);
  std::vector<std::string> header = {"schedule", "sync", "period (ms)", "throughput (samples/s)",
                                     "per GPU (samples/s)"};
  if (tokens) header.push_back("tokens/s");
  for (const char* h :
       {"bubble (%)", "ZB bubble rate (%)", "peak memory", "fits", "peak activations", "peak act. (x M_B)",
        "critical path (ms)", "Δ max/bound", "versions", "batches", "ops"}) {
    header.push_back(h);
  }
  std::vector<std::vector<std::string>> rows;
  for (const SimulationResult& r : results) {
    const RunMetrics& m = r.metrics;
    std::vector<std::string> row = {r.schedule, sync_name(r.spec.sync),
                                    fmt::format("{:.3f}", ns_to_ms(m.period_ns)),
                                    fmt::format("{:.3f}", m.throughput_samples_per_s),
                                    fmt::format("{:.4f}", m.throughput_samples_per_gpu_s)};
    if (tokens) row.push_back(fmt::format("{:.0f}", m.throughput_tokens_per_s));
    row.push_back(fmt::format("{:.2f}", 100 * m.bubble_fraction));
    row.push_back(has_batch_bubble(r) ? fmt::format("{:.2f}", 100 * m.bubble_rate_zb) : "-");
    row.push_back(format_bytes(r.memory.peak_bytes()));
    const std::optional<bool> fits = fits_memory(r);
    row.push_back(fits ? (*fits ? "yes" : "no") : "-");
    row.push_back(format_bytes(max_peak_bytes(r)));
    row.push_back(fmt::format("{:.1f}", max_peak_microbatches(r)));
    row.push_back(fmt::format("{:.3f}", ns_to_ms(r.graph.critical_path_ns)));
    row.push_back(fmt::format("{}/{}", drift_max(r), drift_bound(r)));
    row.push_back(fmt::format("{}", weight_versions_max(r)));
    row.push_back(fmt::format("{}", r.spec.batches));
    row.push_back(fmt::format("{}", m.simulated_ops));
    rows.push_back(std::move(row));
  }
  return out + render_table(header, rows);
}

nlohmann::ordered_json result_to_json(const SimulationResult& r, const ReportOptions& options) {
  const RunMetrics& m = r.metrics;
  nlohmann::ordered_json j;
  j["schedule"] = r.schedule;
  j["sync"] = sync_name(r.spec.sync);
  j["stages"] = r.spec.devices;
  j["microbatches"] = r.spec.microbatches;
  j["microbatch_size"] = r.microbatch_size;
  j["batches"] = r.batches_requested;
  j["batches_simulated"] = r.spec.batches;
  j["period_ms"] = ns_to_ms(m.period_ns);
  j["throughput_samples_per_s"] = m.throughput_samples_per_s;
  j["throughput_tokens_per_s"] = m.throughput_tokens_per_s;
  j["throughput_samples_per_gpu_s"] = m.throughput_samples_per_gpu_s;
  j["bubble_fraction"] = m.bubble_fraction;
  j["bubble_rate_zb"] =
      has_batch_bubble(r) ? nlohmann::ordered_json(m.bubble_rate_zb) : nlohmann::ordered_json();
  j["zb_batch_cost_ms"] =
      has_batch_bubble(r) ? nlohmann::ordered_json(ns_to_ms(m.zb_batch_cost_ns)) : nlohmann::ordered_json();
  j["makespan_ms"] = ns_to_ms(m.makespan_ns);
  j["critical_path_ms"] = ns_to_ms(r.graph.critical_path_ns);
  j["simulated_ops"] = m.simulated_ops;
  // Weights x live versions + gradients + optimizer state + activations, at each device's peak.
  nlohmann::ordered_json peak_memory = nlohmann::ordered_json::array();
  nlohmann::ordered_json peak_weights = nlohmann::ordered_json::array();
  for (const DeviceMemory& d : r.memory.devices) {
    peak_memory.push_back(d.peak_bytes);
    peak_weights.push_back(d.peak_weight_bytes);
  }
  j["peak_memory_bytes"] = peak_memory;
  const std::optional<bool> fits = fits_memory(r);
  j["memory_capacity_bytes"] = r.memory_capacity_bytes > 0 ? nlohmann::ordered_json(r.memory_capacity_bytes)
                                                           : nlohmann::ordered_json();
  j["fits_memory"] = fits ? nlohmann::ordered_json(*fits) : nlohmann::ordered_json();
  j["peak_weight_bytes"] = peak_weights;
  j["peak_activation_bytes"] =
      per_device<Bytes>(r, [](const DeviceMetrics& d) { return d.peak_activation_bytes; });
  j["activation_bytes_per_microbatch"] = r.activation_bytes_per_microbatch;
  j["peak_in_flight"] = per_device<int>(r, [](const DeviceMetrics& d) { return d.peak_in_flight; });
  j["busy_ms_per_batch"] =
      per_device<double>(r, [](const DeviceMetrics& d) { return ns_to_ms(d.busy_ns_per_batch); });
  j["idle_ms_per_batch"] =
      per_device<double>(r, [](const DeviceMetrics& d) { return ns_to_ms(d.idle_ns_per_batch); });
  j["work_ms_per_microbatch"] =
      per_device<double>(r, [](const DeviceMetrics& d) { return ns_to_ms(d.work_ns_per_microbatch); });
  j["drift"] = drift_to_json(r);
  if (options.memory_timeline) {
    nlohmann::ordered_json timeline = nlohmann::ordered_json::array();
    for (const auto& samples : r.trace.memory) {
      nlohmann::ordered_json device = nlohmann::ordered_json::array();
      for (const MemorySample& s : samples) {
        device.push_back({ns_to_ms(s.time_ns), s.activation_bytes, s.in_flight});
      }
      timeline.push_back(std::move(device));
    }
    j["memory_timeline"] = {{"columns", {"time_ms", "activation_bytes", "in_flight"}}, {"devices", timeline}};
  }
  return j;
}

std::string results_to_json(const std::string& scenario_name, const std::vector<SimulationResult>& results,
                            const ReportOptions& options) {
  nlohmann::ordered_json doc;
  doc["format"] = "pipesim-results-1";
  doc["scenario"] = scenario_name;
  doc["results"] = nlohmann::ordered_json::array();
  for (const auto& r : results) doc["results"].push_back(result_to_json(r, options));
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";  // a path may not be UTF-8
}

std::vector<std::string> csv_header() {
  return {"schedule",
          "sync",
          "stages",
          "microbatches",
          "microbatch_size",
          "batches",
          "batches_simulated",
          "period_ms",
          "throughput_samples_per_s",
          "throughput_tokens_per_s",
          "throughput_samples_per_gpu_s",
          "bubble_fraction",
          "bubble_rate_zb",
          "makespan_ms",
          "critical_path_ms",
          "peak_memory_bytes_max",
          "fits_memory",
          "peak_activation_bytes_max",
          "peak_activation_x_mb_max",
          "peak_in_flight_max",
          "simulated_ops",
          "drift_max",
          "drift_bound",
          "staleness_max",
          "weight_versions_max"};
}

std::vector<std::string> csv_row(const SimulationResult& r) {
  const RunMetrics& m = r.metrics;
  return {csv_escape(r.schedule),
          sync_name(r.spec.sync),
          fmt::format("{}", r.spec.devices),
          fmt::format("{}", r.spec.microbatches),
          fmt::format("{}", r.microbatch_size),
          fmt::format("{}", r.batches_requested),
          fmt::format("{}", r.spec.batches),
          fmt::format("{:.6f}", ns_to_ms(m.period_ns)),
          fmt::format("{:.6f}", m.throughput_samples_per_s),
          fmt::format("{:.3f}", m.throughput_tokens_per_s),
          fmt::format("{:.6f}", m.throughput_samples_per_gpu_s),
          fmt::format("{:.6f}", m.bubble_fraction),
          has_batch_bubble(r) ? fmt::format("{:.6f}", m.bubble_rate_zb) : "",
          fmt::format("{:.6f}", ns_to_ms(m.makespan_ns)),
          fmt::format("{:.6f}", ns_to_ms(r.graph.critical_path_ns)),
          fmt::format("{}", r.memory.peak_bytes()),
          fits_memory(r) ? (*fits_memory(r) ? "true" : "false") : "",
          fmt::format("{}", max_peak_bytes(r)),
          fmt::format("{:.4f}", max_peak_microbatches(r)),
          fmt::format("{}", max_in_flight(r)),
          fmt::format("{}", m.simulated_ops),
          fmt::format("{}", drift_max(r)),
          fmt::format("{}", drift_bound(r)),
          fmt::format("{}", staleness_max(r)),
          fmt::format("{}", weight_versions_max(r))};
}

std::string results_to_csv(const std::vector<SimulationResult>& results) {
  auto join = [](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) line += (i ? "," : "") + cells[i];
    return line + "\n";
  };
  std::string out = join(csv_header());
  for (const auto& r : results) out += join(csv_row(r));
  return out;
}

}  // namespace pipesim
