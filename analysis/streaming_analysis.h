#pragma once
// Every figure of a run computed while it streams (sim/run_observer.h), in memory that does not grow with
// the run: O(devices + stages + the window's microbatches + what is in flight). The same figures
// as the trace-based analyses (sim/metrics.h, analysis/drift.h, analysis/memory_model.h), which stay the
// reference: tests/api/streaming_analysis_test.cpp checks that both agree on random runs of every schedule.
// What a stream cannot give without keeping the run: per-microbatch drift and staleness, version and
// memory timelines, the critical path's ops. Those need a recorded trace.
#include <cstdint>
#include <queue>
#include <vector>

#include "analysis/drift.h"
#include "analysis/memory_model.h"
#include "sim/metrics.h"
#include "sim/run_observer.h"
#include "sim/steady_state.h"

namespace pipesim {

struct StreamingConfig {
  PipelineLayout layout;
  int microbatches_per_batch = 1;  // m
  RunWindow window;                // the run's batches and the window its figures are measured over
  int total_microbatches = 0;      // the plan's
  std::vector<StageStaticMemory> static_memory;  // per (virtual) stage
};

class StreamingAnalysis final : public RunObserver, public SteadyStateProbe {
 public:
  explicit StreamingAnalysis(StreamingConfig config);

  // RunObserver
  void op_started(const OpRecord& op) override;
  void memory_changed(int device, const MemorySample& sample) override;
  void gradient_complete(const GradientRecord& gradient) override;
  void version_retired(int stage, int version, TimeNs dead_ns) override;
  void run_finished(TimeNs makespan_ns) override;

  // SteadyStateProbe, over the configured window only.
  int forward_gap_repeat(int first_microbatch, int end_microbatch) const override;
  bool halves_agree(const RunWindow& window) const override;
  long ops() const override { return ops_; }

  // The figures, once the run has finished. `summary` is what the streamed engine run returned.
  RunMetrics metrics(const MetricsInput& input, const RunTrace& summary) const;
  DriftReport drift(const DriftWindow& window, const RunTrace& summary) const;
  MemoryReport memory() const;

 private:
  // A change of a stage's live versions, applied in time order once the engine's present has passed its
  // instant (a retired version's end can lie ahead of the op that retires it).
  struct VersionChange {
    TimeNs time_ns;
    std::int32_t stage;
    std::int32_t live_delta;  // +1 made, -1 retired (deltas: their order within an instant does not matter)
    bool operator>(const VersionChange& other) const { return time_ns > other.time_ns; }
  };
  struct DeviceTally {
    TimeNs busy_ns = 0;                                   // durations of every op started so far
    TimeNs work_ns = 0;                                   // ... of F, B, I, W
    TimeNs last_start_ns = 0, last_end_ns = 0;            // the op started last
    TimeNs last_work_start_ns = 0, last_work_end_ns = 0;  // the F, B, I or W started last
    TimeNs span_begin_ns = kNever, span_end_ns = 0;       // the batch the window starts in (zb cost)
    // Memory
    Bytes activation_bytes = 0;
    Bytes activation_bytes_now = 0;  // the engine's value at the present instant, applied once it is passed
    bool pending_activation = false;
    Bytes activation_bytes_instant_max = 0;  // the largest of the present instant's activation states
    bool activation_bytes_instant_pending = false;
    Bytes weight_bytes = 0;  // weights x live versions of its stages
    Bytes fixed_bytes = 0;
    DeviceMemory memory;
    bool touched = false;
  };
  // Busy (and work) time of every device before `time_ns`, taken when `microbatch` starts on stage 1.
  struct BusyAt {
    int microbatch;
    TimeNs time_ns;
    std::vector<TimeNs> busy_ns, work_ns;
  };
  struct PendingStaleness {
    TimeNs gradient_end_ns;
    int forward_version;
    bool in_window;
    bool operator>(const PendingStaleness& other) const { return gradient_end_ns > other.gradient_end_ns; }
  };
  // Gradients already ended, which the stage's next step applies whatever their ends: counted by what
  // their staleness depends on, so a batch of m gradients waiting for its step costs one entry, not m.
  struct EndedGradients {
    int forward_version;
    bool in_window;
    long count;
  };
  struct StageTally {
    StageDriftTally drift;
    // Gradients whose last op has not ended at the present (ops still running), by end.
    std::priority_queue<PendingStaleness, std::vector<PendingStaleness>, std::greater<>> pending;
    std::vector<EndedGradients> ended;
    int live_versions = 0;
    int versions_max = 0;
    bool touched = false;
  };

  void advance_to(TimeNs now_ns);
  static void settle_gradients(StageTally& stage, TimeNs time_ns);  // pending ones ended by time_ns
  void apply_changes_before(TimeNs time_ns);
  void push_version_change(TimeNs time_ns, int stage, int live_delta);
  void touch_device(int device);
  void capture_busy(int microbatch, TimeNs time_ns);
  TimeNs busy_at(int microbatch, int device, bool work_only) const;
  TimeNs forward_start_ns(int microbatch) const;  // stage 1's F of a microbatch of the window (or its end)

  StreamingConfig config_;
  DriftWindow drift_window_;
  long ops_ = 0;
  TimeNs makespan_ns_ = 0;
  bool finished_ = false;
  TimeNs present_ns_ = 0;
  std::priority_queue<VersionChange, std::vector<VersionChange>, std::greater<>> version_changes_;
  std::vector<int> activation_devices_;  // devices whose activations changed at the present instant
  std::vector<int> touched_devices_;     // of the instant being applied (kept to reuse their storage)
  std::vector<int> touched_stages_;
  std::vector<DeviceTally> devices_;
  std::vector<StageTally> stages_;
  int total_run_microbatches_ = 0;      // the run's batches x m
  std::vector<BusyAt> busy_at_;         // at the window's first, middle and end microbatches
  std::vector<TimeNs> forward_starts_;  // stage 1's F starts of the window's microbatches [first, end]
};

}  // namespace pipesim
