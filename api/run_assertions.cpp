#include "api/run_assertions.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/errors.h"

namespace pipesim {
namespace {

[[noreturn]] void fail(const SimulationResult& r, const std::string& what) {
  throw InternalError(fmt::format("internal error in run {}: {}; this is a pipesim bug, please report it",
                                  run_name(r), what));
}

}  // namespace

std::string run_name(const SimulationResult& r) {
  return fmt::format("{} N={} m={} ({} batches requested)", r.label, r.spec.devices, r.spec.microbatches,
                     r.batches_requested);
}

void assert_physical(const SimulationResult& r, bool exact_costs) {
  const RunMetrics& metrics = r.metrics;
  const long m = r.spec.microbatches;
  const long window_microbatches = metrics.end_microbatch - metrics.first_steady_microbatch;
  if (window_microbatches < 1 || metrics.window_ns < 0 || metrics.period_ns < 0) {
    fail(r, fmt::format("the window (microbatches {}..{}, {} ns) is empty or runs backwards",
                        metrics.first_steady_microbatch, metrics.end_microbatch - 1, metrics.window_ns));
  }
  TimeNs max_work_ns = 0;
  for (size_t d = 0; d < metrics.devices.size(); ++d) {
    const DeviceMetrics& device = metrics.devices[d];
    // A device's peak memory holds at least its peak activations (and its fixed memory besides).
    if (d < r.memory.devices.size() &&
        r.memory.devices[d].peak_bytes < device.peak_activation_bytes + r.memory.devices[d].fixed_bytes) {
      fail(r,
           fmt::format("device {}'s peak memory {} B is below its peak activations {} B plus its fixed {} B",
                       d + 1, r.memory.devices[d].peak_bytes, device.peak_activation_bytes,
                       r.memory.devices[d].fixed_bytes));
    }
    max_work_ns = std::max(max_work_ns, device.work_ns_per_microbatch);
    if (device.idle_ns_per_batch < 0) {
      fail(r, fmt::format("device {} is busy {} ns per batch, longer than the period {} ns", d + 1,
                          device.busy_ns_per_batch, metrics.period_ns));
    }
    if (m * device.work_ns_per_microbatch > metrics.period_ns) {
      fail(r, fmt::format("period {} ns < m x work = {} x {} ns on device {}", metrics.period_ns, m,
                          device.work_ns_per_microbatch, d + 1));
    }
    // A window of whole steady cycles holds exactly the work of its microbatches; one ns per op covers the
    // integer rounding of the mean.
    const long ops_in_window = 3L * r.trace.layout.chunks_per_device * window_microbatches;
    if (exact_costs &&
        window_microbatches * device.run_work_ns_per_microbatch > metrics.window_ns + ops_in_window) {
      fail(r, fmt::format("the window ({} ns over {} microbatches) is shorter than its microbatches' work on "
                          "device {} ({} x {} ns): it is not in steady state",
                          metrics.window_ns, window_microbatches, d + 1, window_microbatches,
                          device.run_work_ns_per_microbatch));
    }
  }
  const double bubble = metrics.bubble_fraction;
  if (!(bubble >= 0) || !(bubble < 1 || (bubble <= 1 && max_work_ns == 0))) {
    fail(r, fmt::format("bubble {} outside [0, 1)", bubble));
  }
  if (max_work_ns > 0) {
    const double bound_samples_per_s = r.microbatch_size / ns_to_s(max_work_ns);
    if (metrics.throughput_samples_per_s > bound_samples_per_s * (1 + 1e-12)) {
      fail(r, fmt::format("throughput {} samples/s above its bound b / max work = {} samples/s",
                          metrics.throughput_samples_per_s, bound_samples_per_s));
    }
  }
  for (size_t s = 0; s < r.drift.stages.size() && s < r.guarantees.size(); ++s) {
    const StageDrift& d = r.drift.stages[s];
    const StageGuarantee& g = r.guarantees[s];
    if (g.max_in_flight > 0 && d.in_flight_max > g.max_in_flight) {
      fail(r, fmt::format("stage {} had {} microbatches in flight, above the schedule's bound {}", s + 1,
                          d.in_flight_max, g.max_in_flight));
    }
    if (d.weight_versions_max > g.weight_versions) {
      fail(r, fmt::format("stage {} held {} weight versions, above the schedule's bound {}", s + 1,
                          d.weight_versions_max, g.weight_versions));
    }
  }
}

}  // namespace pipesim
