#include "report/result_record.h"

#include <optional>

#include "pipesim_version.h"
#include "report/result_figures.h"

namespace pipesim {
namespace {

using Json = nlohmann::ordered_json;

template <typename T>
Json or_null(const std::optional<T>& value) {
  return value ? Json(*value) : Json();
}

Json pipeline_json(const SimulationResult& r) {
  const int chunks = r.spec.devices > 0 ? r.virtual_stages / r.spec.devices : 0;
  return {{"devices", r.spec.devices},
          {"virtual_stages", r.virtual_stages},
          {"chunks", chunks},
          {"microbatches", r.spec.microbatches},
          {"microbatch_size", r.microbatch_size},
          {"global_batch", global_batch_samples(r)},
          {"seq_len", r.seq_len > 0 ? Json(r.seq_len) : Json()},
          {"batches_requested", r.batches_requested},
          {"batches_simulated", r.spec.batches},
          {"simulations", r.simulations}};
}

// The peak device's peak, part by part (the parts add up to its peak_memory_bytes).
Json memory_breakdown_json(const SimulationResult& r) {
  const MemoryBreakdown b = peak_memory_breakdown(r);
  return {{"device", peak_memory_device(r) + 1},    {"weight_bytes", b.weight_bytes},
          {"gradient_bytes", b.gradient_bytes},     {"optimizer_bytes", b.optimizer_bytes},
          {"activation_bytes", b.activation_bytes}, {"buffer_bytes", b.buffer_bytes}};
}

Json metrics_json(const SimulationResult& r) {
  const RunMetrics& m = r.metrics;
  return {{"period_ms", ns_to_ms(m.period_ns)},
          {"throughput_samples_per_s", m.throughput_samples_per_s},
          {"throughput_samples_per_gpu_s", m.throughput_samples_per_gpu_s},
          {"throughput_tokens_per_s", or_null(tokens_per_s(r))},
          {"bubble_fraction", m.bubble_fraction},
          {"bubble_rate_zb", or_null(zb_bubble_rate(r))},
          {"zb_batch_cost_ms", has_batch_bubble(r) ? Json(ns_to_ms(m.zb_batch_cost_ns)) : Json()},
          {"makespan_ms", ns_to_ms(m.makespan_ns)},
          {"critical_path_ms", or_null(critical_path_ms(r))},
          {"simulated_ops", m.simulated_ops},
          {"peak_memory_bytes", r.memory.peak_bytes()},
          {"memory_capacity_bytes", r.memory_capacity_bytes > 0 ? Json(r.memory_capacity_bytes) : Json()},
          {"peak_weight_bytes", or_null(max_peak_weight_bytes(r))},
          {"peak_activation_bytes", max_peak_activation_bytes(r)},
          {"peak_activation_microbatches", max_peak_activation_microbatches(r)},
          {"peak_in_flight", max_peak_in_flight(r)},
          {"drift_max", max_drift(r)},
          {"drift_bound", max_drift_bound(r)},
          {"staleness_max", max_staleness(r)},
          {"weight_versions_max", max_weight_versions(r)},
          {"throughput_tokens_per_gpu_s", or_null(tokens_per_device_s(r))},
          {"model_tflops_per_gpu", or_null(model_tflops_per_device(r))},
          {"mfu", or_null(model_flops_utilization(r))},
          {"model_flops_per_sample", r.model_flops_per_sample > 0 ? Json(r.model_flops_per_sample) : Json()},
          {"memory_breakdown", memory_breakdown_json(r)}};
}

Json devices_json(const SimulationResult& r) {
  Json devices = Json::array();
  for (size_t d = 0; d < r.metrics.devices.size(); ++d) {
    const DeviceMetrics& m = r.metrics.devices[d];
    const DeviceMemory* memory = d < r.memory.devices.size() ? &r.memory.devices[d] : nullptr;
    devices.push_back(
        {{"device", d + 1},
         {"peak_memory_bytes", memory ? Json(memory->peak_bytes) : Json()},
         {"peak_weight_bytes", memory && r.weight_memory_known ? Json(memory->peak_weight_bytes) : Json()},
         {"peak_activation_bytes", m.peak_activation_bytes},
         {"activation_bytes_per_microbatch", r.activation_bytes_per_microbatch.at(d)},
         {"peak_in_flight", m.peak_in_flight},
         {"busy_ms_per_batch", ns_to_ms(m.busy_ns_per_batch)},
         {"idle_ms_per_batch", ns_to_ms(m.idle_ns_per_batch)},
         {"work_ms_per_microbatch", ns_to_ms(m.work_ns_per_microbatch)}});
  }
  return devices;
}

Json stages_json(const SimulationResult& r) {
  Json stages = Json::array();
  for (size_t i = 0; i < r.drift.stages.size(); ++i) {
    const StageDrift& s = r.drift.stages[i];
    stages.push_back({{"stage", i + 1},
                      {"drift_max", s.drift_max},
                      {"drift_mean", s.drift_mean},
                      {"drift_bound", i < r.guarantees.size() ? Json(r.guarantees[i].drift_bound) : Json()},
                      {"staleness_max", s.staleness_max},
                      {"staleness_mean", s.staleness_mean},
                      {"weight_versions_max", s.weight_versions_max},
                      {"in_flight_max", s.in_flight_max},
                      {"drift_histogram", s.drift_histogram}});
  }
  return stages;
}

Json memory_timeline_json(const SimulationResult& r) {
  Json timeline = Json::array();
  for (const auto& samples : r.trace.memory) {
    Json device = Json::array();
    for (const MemorySample& s : samples)
      device.push_back({ns_to_ms(s.time_ns), s.activation_bytes, s.in_flight});
    timeline.push_back(std::move(device));
  }
  return {{"columns", {"time_ms", "activation_bytes", "in_flight"}}, {"devices", timeline}};
}

}  // namespace

std::string pipesim_version() {
  return PIPESIM_VERSION;
}

Json schedule_param_json(const ScheduleParamValue& value) {
  return std::visit([](const auto& v) { return Json(v); }, value);
}

Json result_record(const SimulationResult& r, const ReportOptions& options) {
  Json parameters = Json::object();
  for (const auto& [key, value] : r.schedule_params) parameters[key] = schedule_param_json(value);
  Json j;
  j["schedule"] = {{"name", r.schedule_name}, {"parameters", parameters}};
  j["label"] = r.label;
  j["pipeline"] = pipeline_json(r);
  j["sync"] = name_in(sync_names(), r.spec.sync);
  j["fits"] = or_null(fits_memory(r));
  if (!r.model_choices.empty()) j["model_choices"] = r.model_choices;
  if (!r.profile_kind.empty()) j["profile_kind"] = r.profile_kind;
  if (!r.unmodelled.empty()) j["unmodelled"] = r.unmodelled;
  j["metrics"] = metrics_json(r);
  j["devices"] = devices_json(r);
  j["stages"] = stages_json(r);
  if (options.memory_timeline) j["memory_timeline"] = memory_timeline_json(r);
  return j;
}

Json results_document(const ResultsSource& source, const std::vector<SimulationResult>& results,
                      const ReportOptions& options, const std::vector<SkippedRun>& skipped) {
  Json doc;
  doc["format"] = kResultFormat;
  doc["format_version"] = kResultFormatVersion;
  doc["pipesim_version"] = pipesim_version();
  doc["scenario"] = {{"name", source.scenario_name}, {"path", source.scenario_path}};
  doc["results"] = Json::array();
  for (const SimulationResult& r : results) doc["results"].push_back(result_record(r, options));
  if (!skipped.empty()) {
    doc["skipped"] = Json::array();
    for (const SkippedRun& s : skipped) {
      doc["skipped"].push_back({{"schedule", s.schedule}, {"where", s.where}, {"reason", s.reason}});
    }
  }
  return doc;
}

std::string results_json_text(const ResultsSource& source, const std::vector<SimulationResult>& results,
                              const ReportOptions& options, const std::vector<SkippedRun>& skipped) {
  // A path may not be UTF-8: replaced rather than failing the whole document.
  return results_document(source, results, options, skipped)
             .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

}  // namespace pipesim
