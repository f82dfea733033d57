#pragma once
// Figures computed from a simulated run (docs/design.md §5). Nothing here is assumed; everything is measured
// on the trace.
#include <vector>

#include "sim/steady_state.h"
#include "sim/trace.h"

namespace pipesim {

struct MetricsInput {
  int microbatches_per_batch = 1;  // m
  RunWindow window;                // the steady-state window (sim/steady_state.h)
  double microbatch_size = 1;      // samples per microbatch (b; a mean when a batch does not split evenly)
  int seq_len = 0;                 // tokens per sample; 0 = unknown
};

struct DeviceMetrics {
  TimeNs busy_ns_per_batch = 0;  // compute time (optimizer steps included) in the window, per batch
  TimeNs idle_ns_per_batch = 0;
  // F+B (or F+I+W) time of one microbatch over the device's stages: its gradient and forward ops' time in the
  // window over the window's microbatches. A window of whole steady cycles holds exactly the ops of that many
  // microbatches, so this is one microbatch's work; under noisy costs it is the window's mean.
  TimeNs work_ns_per_microbatch = 0;
  TimeNs run_work_ns_per_microbatch = 0;  // the same over every microbatch of the run
  Bytes peak_activation_bytes = 0;
  int peak_in_flight = 0;
};

struct RunMetrics {
  int first_steady_microbatch = 0;  // the window is microbatches [first_steady_microbatch, end_microbatch)
  int end_microbatch = 0;
  TimeNs window_ns = 0;  // from the first forward of first_steady_microbatch to that of end_microbatch
  TimeNs period_ns = 0;  // time between consecutive batch starts on the first device, steady state
  double throughput_samples_per_s = 0;
  double throughput_tokens_per_s = 0;  // 0 when the sequence length is unknown
  double throughput_samples_per_gpu_s = 0;
  double bubble_fraction = 0;  // 1 - m * max_i work_i / period
  // Zero Bubble paper's convention for one batch: cost = longest per-device span of the batch,
  // bubble = cost - m * max_i work_i, rate = bubble / cost.
  TimeNs zb_batch_cost_ns = 0;
  TimeNs zb_bubble_ns = 0;
  double bubble_rate_zb = 0;
  TimeNs makespan_ns = 0;
  long simulated_ops = 0;
  std::vector<DeviceMetrics> devices;
};

RunMetrics compute_metrics(const RunTrace& trace, const MetricsInput& input);

// What the figures are computed from, gathered from a trace or while a run streams
// (analysis/streaming_analysis.h): one implementation of the formulas for both.
struct MetricsTally {
  TimeNs window_begin_ns = 0;
  TimeNs window_end_ns = 0;
  TimeNs makespan_ns = 0;
  long ops = 0;
  int total_microbatches = 0;
  struct Device {
    TimeNs work_total_ns = 0;      // F, B, I, W time over the run
    TimeNs busy_in_window_ns = 0;  // every op's time inside the window
    TimeNs work_in_window_ns = 0;  // F, B, I, W time inside the window
    TimeNs span_begin_ns =
        kNever;  // first start and last end of the F, B, I, W of the batch the window starts in
    TimeNs span_end_ns = 0;
    Bytes peak_activation_bytes = 0;
    int peak_in_flight = 0;
  };
  std::vector<Device> devices;
};

RunMetrics metrics_from_tally(const MetricsTally& tally, const MetricsInput& input);

}  // namespace pipesim
