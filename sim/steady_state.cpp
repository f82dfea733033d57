#include "sim/steady_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "sim/errors.h"

namespace pipesim {
namespace {

int ceil_div_positive(long numerator, long denominator) {
  return static_cast<int>((std::max(0L, numerator) + denominator - 1) / denominator);
}

// The cycle in whole batches: lcm(cycle microbatches, m) / m.
int cycle_batches_of(int cycle_microbatches, int m) {
  const long cycle = std::max(1, cycle_microbatches);
  return static_cast<int>(std::lcm(cycle, static_cast<long>(m)) / m);
}

RunWindow window_of(int warmup_batches, int half_batches, int tail_batches, int min_batches) {
  RunWindow w;
  w.first_batch = warmup_batches;
  w.end_batch = warmup_batches + 2 * half_batches;
  w.total_batches = w.end_batch + tail_batches;
  if (w.total_batches < min_batches) {  // more warm-up costs nothing in accuracy
    const int extra = min_batches - w.total_batches;
    w.first_batch += extra;
    w.end_batch += extra;
    w.total_batches = min_batches;
  }
  return w;
}

int tail_batches_of(const RunLengthOptions& o) {
  // The batch the window ends at must exist, and the drain must lie after the window.
  return std::max(1, ceil_div_positive(o.hint.drain_microbatches, o.microbatches_per_batch));
}

bool nearly_equal(TimeNs a, TimeNs b) {
  const double scale = static_cast<double>(std::max(std::abs(a), std::abs(b)));
  return std::abs(static_cast<double>(a - b)) <= kHalvesTolerance * scale;
}

}  // namespace

RunWindow initial_window(const RunLengthOptions& o) {
  const int m = o.microbatches_per_batch;
  // Noisy costs never repeat, so whole cycles buy nothing there: halves of one batch each.
  const int cycle = o.exact_repeat ? cycle_batches_of(o.hint.cycle_microbatches, m) : 1;
  const int warmup = ceil_div_positive(o.hint.warmup_microbatches, m);
  const int tail = tail_batches_of(o);
  // Extra requested batches widen the window by whole pairs of cycles.
  int pairs = std::max(1, (o.min_batches - warmup - tail) / (2 * cycle));
  // Where fill and drain are long (a stream of few microbatches per batch over many stages), a window of up
  // to half their length costs the first run at most half as much again, and catches steady patterns longer
  // than the schedule's cycle (comm latency shifting ops across batch boundaries: 16 batches for async
  // 1F1B at N=64, m=4) that would otherwise cost a full re-run per doubling.
  if (o.exact_repeat) pairs = std::max(pairs, (warmup + tail) / 4 / cycle);
  return window_of(warmup, pairs * cycle, tail, o.min_batches);
}

std::vector<TimeNs> batch_start_times(const RunTrace& trace, int m, int batches) {
  std::vector<TimeNs> starts(batches, kNever);
  for (const OpRecord& op : trace.ops) {
    if (op.action.kind == OpKind::F && trace.layout.is_first_stage(op.action.stage) &&
        op.action.microbatch % m == 0) {
      const int batch = op.action.microbatch / m;
      if (batch < batches) starts[batch] = std::min(starts[batch], op.start_ns);
    }
  }
  return starts;
}

int forward_gap_repeat(const RunTrace& trace, int first_microbatch, int end_microbatch) {
  const int count = end_microbatch - first_microbatch;
  if (count < 2) return 0;
  std::vector<TimeNs> start(count + 1, kNever);
  for (const OpRecord& op : trace.ops) {
    const int j = op.action.microbatch - first_microbatch;
    if (op.action.kind == OpKind::F && trace.layout.is_first_stage(op.action.stage) && j >= 0 && j <= count)
      start[j] = op.start_ns;
  }
  return forward_gap_repeat(start);
}

int forward_gap_repeat(const std::vector<TimeNs>& start) {
  const int count = static_cast<int>(start.size()) - 1;
  if (count < 2) return 0;
  std::vector<TimeNs> gap(count);
  for (int j = 0; j < count; ++j) gap[j] = start[j + 1] - start[j];
  for (int p = 1; p <= count / 2; ++p) {
    bool repeats = true;
    for (int j = 0; j + p < count && repeats; ++j) repeats = gap[j] == gap[j + p];
    if (repeats) return p;
  }
  return 0;
}

bool halves_agree(const RunTrace& trace, const RunWindow& window, int m) {
  const std::vector<TimeNs> starts = batch_start_times(trace, m, window.total_batches);
  const int mid = window.first_batch + window.batches() / 2;
  HalvesTally tally;
  tally.begin_ns = starts[window.first_batch];
  tally.middle_ns = starts[mid];
  tally.end_ns = starts[window.end_batch];
  const int devices = trace.layout.devices;
  tally.first_busy_ns.assign(devices, 0);
  tally.second_busy_ns.assign(devices, 0);
  tally.work_ns.assign(devices, 0);
  tally.ops = static_cast<long>(trace.ops.size());
  tally.total_microbatches = trace.total_microbatches;
  for (const OpRecord& op : trace.ops) {
    tally.first_busy_ns[op.device] +=
        std::max<TimeNs>(0, std::min(op.end_ns, tally.middle_ns) - std::max(op.start_ns, tally.begin_ns));
    tally.second_busy_ns[op.device] +=
        std::max<TimeNs>(0, std::min(op.end_ns, tally.end_ns) - std::max(op.start_ns, tally.middle_ns));
    if (op.action.kind != OpKind::U) tally.work_ns[op.device] += op.duration_ns();
  }
  return halves_agree(tally, window, m);
}

bool halves_agree(const HalvesTally& tally, const RunWindow& window, int m) {
  if (!nearly_equal(tally.middle_ns - tally.begin_ns, tally.end_ns - tally.middle_ns)) return false;
  // A half shorter than the work its microbatches need on some device is a transient (the first device
  // running ahead of a slower one while the lag grows), however alike the halves look: not steady yet.
  const double microbatches_per_half = static_cast<double>(window.batches() / 2) * m;
  const double slack_ns = static_cast<double>(tally.ops);  // integer rounding, 1 ns per op
  for (size_t d = 0; d < tally.work_ns.size(); ++d) {
    if (!nearly_equal(tally.first_busy_ns[d], tally.second_busy_ns[d])) return false;
    const double work_per_microbatch =
        static_cast<double>(tally.work_ns[d]) / std::max(1, tally.total_microbatches);
    if (static_cast<double>(tally.middle_ns - tally.begin_ns) + slack_ns <
        microbatches_per_half * work_per_microbatch)
      return false;
  }
  return true;
}

SteadyWindow find_steady_window(const RunLengthOptions& o,
                                const std::function<const SteadyStateProbe&(const RunWindow& window)>& run) {
  SteadyWindow result;
  if (o.fixed_length) {
    result.window = {o.min_batches, 0, o.min_batches};
    run(result.window);
    result.simulations = 1;
    return result;
  }
  const int m = o.microbatches_per_batch;
  const int tail = tail_batches_of(o);
  int cycle = cycle_batches_of(o.hint.cycle_microbatches, m);
  RunWindow window = initial_window(o);
  int warmup = window.first_batch;
  int half = window.batches() / 2;
  for (;;) {
    const SteadyStateProbe& probe = run(window);
    result.window = window;
    ++result.simulations;
    if (!o.exact_repeat) return result;
    // The trace may repeat on a longer cycle than the schedule knew (comm latency, uneven stages): the
    // halves must then be whole multiples of it.
    bool cycle_grew = false;
    if (const int p = probe.forward_gap_repeat(window.first_batch * m, window.end_batch * m); p > 0) {
      const int seen = cycle_batches_of(p, m);
      if (half % seen != 0) {
        cycle = std::lcm(cycle, seen);
        half = (half + cycle - 1) / cycle * cycle;
        cycle_grew = true;
      }
    }
    if (!cycle_grew) {
      if (probe.halves_agree(window, m)) return result;
      warmup += half;  // the old window's first half may still have been filling
      half *= 2;
    }
    const RunWindow next = window_of(warmup, half, tail, o.min_batches);
    const double ops_per_batch = static_cast<double>(probe.ops()) / window.total_batches;
    if (ops_per_batch * next.total_batches > static_cast<double>(o.max_ops)) {
      throw ScheduleError(fmt::format(
          "{}: no steady state within {} simulated ops: after {} batches the two halves of the window "
          "(batches {}..{}) still differ",
          o.run_name, o.max_ops, window.total_batches, window.first_batch, window.end_batch - 1));
    }
    window = next;
  }
}

namespace {

class TraceProbe final : public SteadyStateProbe {
 public:
  explicit TraceProbe(const RunTrace& trace) : trace_(trace) {}
  int forward_gap_repeat(int first, int end) const override {
    return pipesim::forward_gap_repeat(trace_, first, end);
  }
  bool halves_agree(const RunWindow& window, int m) const override {
    return pipesim::halves_agree(trace_, window, m);
  }
  long ops() const override { return static_cast<long>(trace_.ops.size()); }

 private:
  const RunTrace& trace_;
};

}  // namespace

SteadyRun simulate_steady_state(const RunLengthOptions& o, const std::function<RunTrace(int batches)>& run) {
  SteadyRun result;
  std::optional<TraceProbe> probe;
  const SteadyWindow steady = find_steady_window(o, [&](const RunWindow& window) -> const SteadyStateProbe& {
    result.trace = run(window.total_batches);
    return probe.emplace(result.trace);
  });
  result.window = steady.window;
  result.simulations = steady.simulations;
  return result;
}

}  // namespace pipesim
