#include "sim/metrics.h"

#include <algorithm>

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

// Batch starts: the first forward of each batch's first microbatch on stage 1.
std::vector<TimeNs> batch_starts(const RunTrace& trace, int m, int batches) {
  std::vector<TimeNs> starts(batches, kNever);
  for (const OpRecord& op : trace.ops) {
    if (op.action.kind == OpKind::F && op.action.stage == 0 && op.action.microbatch % m == 0) {
      const int batch = op.action.microbatch / m;
      if (batch < batches) starts[batch] = std::min(starts[batch], op.start_ns);
    }
  }
  return starts;
}

}  // namespace

RunMetrics compute_metrics(const RunTrace& trace, const MetricsInput& input) {
  const int m = input.microbatches_per_batch;
  const int devices = trace.layout.devices;
  RunMetrics result;
  result.makespan_ns = trace.makespan_ns;
  result.simulated_ops = static_cast<long>(trace.ops.size());
  result.devices.resize(devices);

  // Steady-state window: skip the first quarter of the batches (at least one), end at the last batch start,
  // which the drain cannot affect.
  const std::vector<TimeNs> starts = batch_starts(trace, m, input.batches);
  const int batches = input.batches;
  int lo = 0;
  int hi = batches;  // hi == batches: the window ends at the makespan
  if (batches >= 3) {
    lo = std::max(1, batches / 4);
    hi = batches - 1;
  } else if (batches == 2) {
    hi = 1;
  }
  // A stream (asynchronous schedules) is still filling until the first device has run its first backward;
  // when the first quarter is shorter than that, start at the first batch that begins afterwards.
  const auto first_backward = std::find_if(trace.ops.begin(), trace.ops.end(), [](const OpRecord& op) {
    return op.device == 0 && (op.action.kind == OpKind::B || op.action.kind == OpKind::I);
  });
  if (first_backward != trace.ops.end()) {
    while (lo + 1 < hi && starts[lo] < first_backward->end_ns) ++lo;
  }
  const TimeNs window_begin = starts[lo];
  const TimeNs window_end = hi < batches ? starts[hi] : trace.makespan_ns;
  const int window_batches = hi - lo;
  result.first_steady_batch = lo;
  result.last_batch = hi;
  result.period_ns = (window_end - window_begin) / window_batches;

  // Per-device work and busy time.
  std::vector<TimeNs> work_total(devices, 0);
  std::vector<TimeNs> busy_in_window(devices, 0);
  std::vector<TimeNs> span_begin(devices, kNever);
  std::vector<TimeNs> span_end(devices, 0);
  BatchOf batch_of(trace.layout.stages, m);
  for (const OpRecord& op : trace.ops) {
    const int d = op.device;
    if (op.action.kind != OpKind::U) work_total[d] += op.duration_ns();
    const TimeNs overlap = std::min(op.end_ns, window_end) - std::max(op.start_ns, window_begin);
    if (overlap > 0) busy_in_window[d] += overlap;
    // U is left out: under a barrier it waits for the slowest stage, which is not this device's bubble.
    if (op.action.kind != OpKind::U && batch_of(op) == lo) {
      span_begin[d] = std::min(span_begin[d], op.start_ns);
      span_end[d] = std::max(span_end[d], op.end_ns);
    }
  }
  TimeNs max_work = 0;
  for (int d = 0; d < devices; ++d) {
    DeviceMetrics& dm = result.devices[d];
    dm.work_ns_per_microbatch = work_total[d] / std::max(1, trace.total_microbatches);
    dm.busy_ns_per_batch = busy_in_window[d] / window_batches;
    dm.idle_ns_per_batch = result.period_ns - dm.busy_ns_per_batch;
    dm.peak_activation_bytes = trace.peak_activation_bytes[d];
    dm.peak_in_flight = trace.peak_in_flight[d];
    max_work = std::max(max_work, dm.work_ns_per_microbatch);
    if (span_begin[d] != kNever) {
      result.zb_batch_cost_ns = std::max(result.zb_batch_cost_ns, span_end[d] - span_begin[d]);
    }
  }

  const double period_s = ns_to_s(result.period_ns);
  if (result.period_ns > 0) {
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
