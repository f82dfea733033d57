#include "sim/steady_state.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "base/errors.h"

namespace pipesim {
namespace {

int ceil_div_positive(long numerator, long denominator) {
  return static_cast<int>((std::max(0L, numerator) + denominator - 1) / denominator);
}

// The window's cycle in microbatches: the schedule's, or one batch under noisy costs (which never repeat, so
// whole cycles buy nothing there).
int cycle_microbatches_of(const RunLengthOptions& o) {
  return o.exact_repeat ? std::max(1, o.hint.cycle_microbatches) : o.microbatches_per_batch;
}

// The warm-up in whole cycles: a window starts where a cycle does (a batch for synchronous schedules, an
// optimizer step for a stream), which matters where the first cycle differs from the rest in more than
// timing (PipeDream-2BW's first batch reads version 0 with no lag).
int warmup_microbatches_of(const RunLengthOptions& o) {
  const int cycle = cycle_microbatches_of(o);
  return ceil_div_positive(o.hint.warmup_microbatches, cycle) * cycle;
}

// After the window: the microbatch it ends at must exist, and the drain must lie after the window.
int tail_microbatches_of(const RunLengthOptions& o) {
  return std::max(1, o.hint.drain_microbatches);
}

// A window of warmup, two halves and the tail, in whole batches of the run; where the requested batches
// leave room, more warm-up (whole cycles, so a batch-aligned window stays aligned) costs nothing in accuracy.
RunWindow window_of(const RunLengthOptions& o, int warmup, int half, int cycle) {
  const int m = o.microbatches_per_batch;
  const int tail = tail_microbatches_of(o);
  RunWindow w;
  w.first_microbatch = warmup;
  w.end_microbatch = warmup + 2 * half;
  const long needed = static_cast<long>(w.end_microbatch) + tail;
  w.total_batches = std::max(o.min_batches, ceil_div_positive(needed, m));
  const long room = static_cast<long>(w.total_batches) * m - needed;
  const int shift = static_cast<int>(room / cycle * cycle);
  w.first_microbatch += shift;
  w.end_microbatch += shift;
  return w;
}

bool nearly_equal(TimeNs a, TimeNs b) {
  const double scale = static_cast<double>(std::max(std::abs(a), std::abs(b)));
  return std::abs(static_cast<double>(a - b)) <= kHalvesTolerance * scale;
}

}  // namespace

RunWindow initial_window(const RunLengthOptions& o) {
  const int m = o.microbatches_per_batch;
  const int cycle = cycle_microbatches_of(o);
  const int warmup = warmup_microbatches_of(o);
  const int tail = tail_microbatches_of(o);
  // Extra requested batches widen the window by whole pairs of cycles.
  const long spare = static_cast<long>(o.min_batches) * m - warmup - tail;
  int pairs = std::max(1, static_cast<int>(std::max(0L, spare) / (2L * cycle)));
  if (o.exact_repeat) {
    // Where fill and drain are long (a stream over many stages), a window of up to half their length costs
    // the first run at most half as much again, and catches steady patterns longer than the schedule's cycle
    // (comm latency: async 1F1B at N=64 repeats every 64 microbatches) that would otherwise cost a re-run.
    // Wider windows (requested batches) are whole multiples of it, for the same reason.
    const int fill_pairs = (warmup + tail) / 4 / cycle;
    if (fill_pairs > 0) pairs = std::max(fill_pairs, pairs / fill_pairs * fill_pairs);
  }
  return window_of(o, warmup, pairs * cycle, cycle);
}

std::vector<TimeNs> forward_start_times(const RunTrace& trace, const std::vector<int>& microbatches) {
  std::vector<TimeNs> starts(microbatches.size(), kNever);
  for (const OpRecord& op : trace.ops) {
    if (op.action.kind != OpKind::F || !trace.layout.is_first_stage(op.action.stage)) continue;
    const auto at = std::lower_bound(microbatches.begin(), microbatches.end(), op.action.microbatch);
    for (auto i = at; i != microbatches.end() && *i == op.action.microbatch; ++i) {
      TimeNs& start = starts[i - microbatches.begin()];
      start = std::min(start, op.start_ns);
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

bool halves_agree(const RunTrace& trace, const RunWindow& window) {
  const std::vector<TimeNs> starts = forward_start_times(
      trace, {window.first_microbatch, window.middle_microbatch(), window.end_microbatch});
  HalvesTally tally;
  tally.begin_ns = starts[0];
  tally.middle_ns = starts[1];
  tally.end_ns = starts[2];
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
  return halves_agree(tally, window);
}

bool halves_agree(const HalvesTally& tally, const RunWindow& window) {
  if (!nearly_equal(tally.middle_ns - tally.begin_ns, tally.end_ns - tally.middle_ns)) return false;
  // A half shorter than the work its microbatches need on some device is a transient (the first device
  // running ahead of a slower one while the lag grows), however alike the halves look: not steady yet.
  const double microbatches_per_half = window.microbatches() / 2;
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
  const int m = o.microbatches_per_batch;
  if (o.fixed_length) {
    result.window = RunWindow::of_batches(o.min_batches, 0, o.min_batches, m);
    run(result.window);
    result.simulations = 1;
    return result;
  }
  int cycle = cycle_microbatches_of(o);
  RunWindow window = initial_window(o);
  int warmup = window.first_microbatch;
  int half = window.microbatches() / 2;
  for (;;) {
    const SteadyStateProbe& probe = run(window);
    result.window = window;
    ++result.simulations;
    if (!o.exact_repeat) return result;
    // The trace may repeat on a longer cycle than the schedule knew (comm latency, uneven stages): the
    // halves must then be whole multiples of it. A repeat seen in an earlier, shorter window may have been
    // a transient's: the cycle is the schedule's and the latest repeat's, not every repeat's seen so far
    // (whose product can outgrow any run: 84 then 109 microbatches made 9,156).
    bool cycle_grew = false;
    if (const int p = probe.forward_gap_repeat(window.first_microbatch, window.end_microbatch); p > 0) {
      if (half % p != 0) {
        cycle = std::lcm(cycle_microbatches_of(o), p);
        half = (half + cycle - 1) / cycle * cycle;
        cycle_grew = true;
      }
    }
    if (!cycle_grew) {
      if (probe.halves_agree(window)) return result;
      warmup += half;  // the old window's first half may still have been filling
      half *= 2;
    }
    const RunWindow next = window_of(o, warmup, half, cycle);
    const double ops_per_batch = static_cast<double>(probe.ops()) / window.total_batches;
    if (ops_per_batch * next.total_batches > static_cast<double>(o.max_ops)) {
      throw ScheduleError(fmt::format(
          "{}: no steady state within {} simulated ops: after {} batches the two halves of the window "
          "(microbatches {}..{}) still differ",
          o.run_name, o.max_ops, window.total_batches, window.first_microbatch, window.end_microbatch - 1));
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
  bool halves_agree(const RunWindow& window) const override { return pipesim::halves_agree(trace_, window); }
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
