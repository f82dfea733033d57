#include "sim/metrics.h"

#include <algorithm>

#include "sim/errors.h"

namespace pipesim {
namespace {

// An optimizer step belongs to the batch of the last gradient op its stage ran before it (a stream's steps
// are numbered per stage, not per batch).
class BatchOf {
 public:
  BatchOf(int stages, int m) : last_gradient_mb_(stages, 0), m_(m) {}
  // Call in trace order.
  int operator()(const OpRecord& op) {
    const Action& a = op.action;
    if (a.kind == OpKind::U) return last_gradient_mb_[a.stage] / m_;
    if (is_gradient_op(a.kind)) last_gradient_mb_[a.stage] = a.microbatch;
    return a.microbatch / m_;
  }

 private:
  std::vector<int> last_gradient_mb_;
  int m_;
};

}  // namespace

RunMetrics compute_metrics(const RunTrace& trace, const MetricsInput& input) {
  const int m = input.microbatches_per_batch;
  const int devices = trace.layout.devices;
  RunMetrics result;
  result.makespan_ns = trace.makespan_ns;
  result.simulated_ops = static_cast<long>(trace.ops.size());
  result.devices.resize(devices);

  const RunWindow& w = input.window;
  const std::vector<TimeNs> starts = batch_start_times(trace, m, w.total_batches);
  const int lo = w.first_batch;
  const int hi = w.end_batch;
  const TimeNs window_begin = starts[lo];
  const TimeNs window_end = hi < w.total_batches ? starts[hi] : trace.makespan_ns;
  const int window_batches = hi - lo;
  result.first_steady_batch = lo;
  result.last_batch = hi;
  result.window_ns = window_end - window_begin;
  result.period_ns = result.window_ns / window_batches;

  // Per-device work and busy time.
  std::vector<TimeNs> work_total(devices, 0);
  std::vector<TimeNs> busy_in_window(devices, 0);
  std::vector<TimeNs> work_in_window(devices, 0);
  std::vector<TimeNs> span_begin(devices, kNever);
  std::vector<TimeNs> span_end(devices, 0);
  BatchOf batch_of(trace.layout.stages, m);
  for (const OpRecord& op : trace.ops) {
    const int d = op.device;
    if (op.action.kind != OpKind::U) work_total[d] += op.duration_ns();
    const TimeNs overlap = std::min(op.end_ns, window_end) - std::max(op.start_ns, window_begin);
    if (overlap > 0) busy_in_window[d] += overlap;
    if (overlap > 0 && op.action.kind != OpKind::U) work_in_window[d] += overlap;
    // U is left out: under a barrier it waits for the slowest stage, which is not this device's bubble.
    if (op.action.kind != OpKind::U && batch_of(op) == lo) {
      span_begin[d] = std::min(span_begin[d], op.start_ns);
      span_end[d] = std::max(span_end[d], op.end_ns);
    }
  }
  TimeNs max_work = 0;
  for (int d = 0; d < devices; ++d) {
    DeviceMetrics& dm = result.devices[d];
    dm.work_ns_per_microbatch = work_in_window[d] / (static_cast<TimeNs>(window_batches) * m);
    dm.run_work_ns_per_microbatch = work_total[d] / std::max(1, trace.total_microbatches);
    dm.busy_ns_per_batch = busy_in_window[d] / window_batches;
    dm.idle_ns_per_batch = result.period_ns - dm.busy_ns_per_batch;
    dm.peak_activation_bytes = trace.peak_activation_bytes[d];
    dm.peak_in_flight = trace.peak_in_flight[d];
    max_work = std::max(max_work, dm.work_ns_per_microbatch);
    if (span_begin[d] != kNever) {
      result.zb_batch_cost_ns = std::max(result.zb_batch_cost_ns, span_end[d] - span_begin[d]);
    }
  }

  // Every op of the run lasted 0 ns (the inputs refuse all-zero costs; tiny times split over chunks can still
  // round to 0): a batch would take no time, so throughput and bubble have no value.
  if (result.period_ns <= 0) {
    throw InputError(
        "every op of this run lasts 0 ns, so a batch takes no time and its throughput is undefined: give the "
        "forward or backward a positive time (at least 1 ns per chunk)");
  }
  const double period_s = ns_to_s(result.period_ns);
  {
    const double samples = static_cast<double>(m) * input.microbatch_size;
    result.throughput_samples_per_s = samples / period_s;
    result.throughput_tokens_per_s = result.throughput_samples_per_s * input.seq_len;
    result.throughput_samples_per_gpu_s = result.throughput_samples_per_s / devices;
    result.bubble_fraction = 1.0 - static_cast<double>(m) * max_work / result.period_ns;
  }
  if (result.zb_batch_cost_ns > 0) {
    result.zb_bubble_ns = result.zb_batch_cost_ns - static_cast<TimeNs>(m) * max_work;
    result.bubble_rate_zb = static_cast<double>(result.zb_bubble_ns) / result.zb_batch_cost_ns;
  }
  return result;
}

}  // namespace pipesim
