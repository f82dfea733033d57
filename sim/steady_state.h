#pragma once
// How long a run must be for its figures to be steady-state figures (docs/design.md §5). The run length is
// the simulator's job, not the user's: the requested batches are a minimum. A run passes every stage's fill
// (warm-up), measures over a window of whole steady cycles that ends before the drain, and, with
// deterministic costs, doubles the window until its two halves agree. Schedule-agnostic: the schedule only
// says how long its fill, cycle and drain are (Schedule::steady_state); the cycle is also read off the trace.
#include <functional>
#include <string>

#include "sim/trace.h"

namespace pipesim {

// What a schedule knows about its own run length, in microbatches.
struct SteadyStateHint {
  int warmup_microbatches = 0;  // before every stage has passed its fill
  int cycle_microbatches = 1;   // the pattern repeats every this many microbatches (m; a for a stream)
  int drain_microbatches = 0;   // after the window, that the window's figures still depend on
};

// The measurement window of a run of total_batches batches: microbatches [first_microbatch,
// end_microbatch), from the first forward of first_microbatch on stage 1 to that of end_microbatch (the
// makespan when end_microbatch is past the run). Its length is a whole number of the run's cycles; a
// schedule whose cycle is a batch (a flush, an optimizer step per batch) cuts it at batch starts, a stream
// whose pattern repeats within a batch (PipeDream, PACI) may cut it between them.
struct RunWindow {
  int total_batches = 1;
  int first_microbatch = 0;
  int end_microbatch = 1;
  int microbatches() const { return end_microbatch - first_microbatch; }
  int middle_microbatch() const { return first_microbatch + microbatches() / 2; }
  // A window total per batch of m microbatches, ⌊value · m / microbatches⌋, without forming value · m (a
  // window of 100 s ops can span 10^17 ns).
  TimeNs per_batch(TimeNs value, int m) const {
    const TimeNs w = microbatches();
    return value / w * m + value % w * m / w;
  }
  // The window of whole batches [first_batch, end_batch) of m microbatches each.
  static RunWindow of_batches(int total_batches, int first_batch, int end_batch, int m) {
    return {total_batches, first_batch * m, end_batch * m};
  }
};

struct RunLengthOptions {
  int microbatches_per_batch = 1;  // m
  int min_batches = 1;             // the user's `batches`
  SteadyStateHint hint;
  // Deterministic costs repeat exactly: double until the halves agree (relative kHalvesTolerance). Noisy
  // costs never repeat: one run with the minimum warm-up and a fixed window of two batches (widened by the
  // requested batches), not whole cycles.
  bool exact_repeat = true;
  // Exactly min_batches, measured over the whole run (to the makespan): engine tests and timelines that
  // draw what was asked. Its figures are whole-run figures, fill and drain included.
  bool fixed_length = false;
  long max_ops = 4'000'000;  // no doubling beyond this many simulated ops: a clear error, never a hang
  std::string run_name;      // for that error
};

inline constexpr double kHalvesTolerance = 1e-9;

struct SteadyRun {
  RunTrace trace;
  RunWindow window;
  int simulations = 0;  // runs it took
};

// The first window tried: the warm-up, then two halves of whole cycles (widened to use the requested
// batches), then the drain.
RunWindow initial_window(const RunLengthOptions& options);

// Start time of each of `microbatches` (ascending): its first forward on stage 1 (kNever when absent).
std::vector<TimeNs> forward_start_times(const RunTrace& trace, const std::vector<int>& microbatches);

// Smallest p such that stage 1's forward-start gaps repeat every p microbatches over microbatches
// [first, end); 0 when none up to half the range.
int forward_gap_repeat(const RunTrace& trace, int first_microbatch, int end_microbatch);

// The same from the F start times of stage 1's microbatches first..end (inclusive; kNever when absent).
int forward_gap_repeat(const std::vector<TimeNs>& forward_starts);

// Whether the window's two halves have the same span and the same busy time per device.
bool halves_agree(const RunTrace& trace, const RunWindow& window);

// What halves_agree reads, gathered from a trace or while a run streams.
struct HalvesTally {
  TimeNs begin_ns = 0;  // starts of the window's first microbatch, of its second half, of the one after it
  TimeNs middle_ns = 0;
  TimeNs end_ns = 0;
  std::vector<TimeNs> first_busy_ns;   // per device: every op's time in the first half
  std::vector<TimeNs> second_busy_ns;  // ... in the second half
  std::vector<TimeNs> work_ns;         // per device: F, B, I, W time over the run
  long ops = 0;
  int total_microbatches = 0;
};
bool halves_agree(const HalvesTally& tally, const RunWindow& window);

// What the run-length search reads off one run: its recorded trace, or a streaming analysis of it.
class SteadyStateProbe {
 public:
  virtual ~SteadyStateProbe() = default;
  // forward_gap_repeat over microbatches [first, end) of the run.
  virtual int forward_gap_repeat(int first_microbatch, int end_microbatch) const = 0;
  virtual bool halves_agree(const RunWindow& window) const = 0;
  virtual long ops() const = 0;
};

struct SteadyWindow {
  RunWindow window;
  int simulations = 0;
};

// Runs `run(window)` on growing windows until the window is in steady state; `run` returns the probe of
// the run it made (the caller keeps that run). Throws ScheduleError when the window has not converged
// before options.max_ops.
SteadyWindow find_steady_window(const RunLengthOptions& options,
                                const std::function<const SteadyStateProbe&(const RunWindow& window)>& run);

// The same over recorded traces: simulates `run(batches)` until its window is in steady state.
SteadyRun simulate_steady_state(const RunLengthOptions& options,
                                const std::function<RunTrace(int batches)>& run);

}  // namespace pipesim
