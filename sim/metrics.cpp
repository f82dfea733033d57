#include "sim/metrics.h"

#include <algorithm>

#include "base/errors.h"

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
  const RunWindow& w = input.window;
  const std::vector<TimeNs> starts = forward_start_times(trace, {w.first_microbatch, w.end_microbatch});
  MetricsTally tally;
  tally.window_begin_ns = starts[0];
  tally.window_end_ns = w.end_microbatch < w.total_batches * m ? starts[1] : trace.makespan_ns;
  tally.makespan_ns = trace.makespan_ns;
  tally.ops = static_cast<long>(trace.ops.size());
  tally.total_microbatches = trace.total_microbatches;
  tally.devices.resize(devices);
  BatchOf batch_of(trace.layout.stages, m);
  for (const OpRecord& op : trace.ops) {
    MetricsTally::Device& t = tally.devices[op.device];
    if (op.action.kind != OpKind::U) t.work_total_ns += op.duration_ns();
    const TimeNs overlap =
        std::min(op.end_ns, tally.window_end_ns) - std::max(op.start_ns, tally.window_begin_ns);
    if (overlap > 0) t.busy_in_window_ns += overlap;
    if (overlap > 0 && op.action.kind != OpKind::U) t.work_in_window_ns += overlap;
    // U is left out: under a barrier it waits for the slowest stage, which is not this device's bubble.
    if (op.action.kind != OpKind::U && batch_of(op) == w.first_microbatch / m) {
      t.span_begin_ns = std::min(t.span_begin_ns, op.start_ns);
      t.span_end_ns = std::max(t.span_end_ns, op.end_ns);
    }
  }
  for (int d = 0; d < devices; ++d) {
    tally.devices[d].peak_activation_bytes = trace.peak_activation_bytes[d];
    tally.devices[d].peak_in_flight = trace.peak_in_flight[d];
  }
  return metrics_from_tally(tally, input);
}

RunMetrics metrics_from_tally(const MetricsTally& tally, const MetricsInput& input) {
  const int m = input.microbatches_per_batch;
  const int devices = static_cast<int>(tally.devices.size());
  RunMetrics result;
  result.makespan_ns = tally.makespan_ns;
  result.simulated_ops = tally.ops;
  result.devices.resize(devices);
  const RunWindow& w = input.window;
  const TimeNs window_microbatches = w.microbatches();
  result.first_steady_microbatch = w.first_microbatch;
  result.end_microbatch = w.end_microbatch;
  result.window_ns = tally.window_end_ns - tally.window_begin_ns;
  // Per batch of m microbatches: the window need not hold whole batches (a stream's cycle may be shorter).
  result.period_ns = w.per_batch(result.window_ns, m);

  TimeNs max_work = 0;
  for (int d = 0; d < devices; ++d) {
    const MetricsTally::Device& t = tally.devices[d];
    DeviceMetrics& dm = result.devices[d];
    dm.work_ns_per_microbatch = t.work_in_window_ns / window_microbatches;
    dm.run_work_ns_per_microbatch = t.work_total_ns / std::max(1, tally.total_microbatches);
    dm.busy_ns_per_batch = w.per_batch(t.busy_in_window_ns, m);
    dm.idle_ns_per_batch = result.period_ns - dm.busy_ns_per_batch;
    dm.peak_activation_bytes = t.peak_activation_bytes;
    dm.peak_in_flight = t.peak_in_flight;
    max_work = std::max(max_work, dm.work_ns_per_microbatch);
    if (t.span_begin_ns != kNever) {
      result.zb_batch_cost_ns = std::max(result.zb_batch_cost_ns, t.span_end_ns - t.span_begin_ns);
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
