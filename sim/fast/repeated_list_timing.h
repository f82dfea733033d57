#pragma once
// One batch's static lists repeated for a number of batches (each followed by the device's optimizer
// steps, as schedules/schedule.h's repeat_batches builds them), timed in one dependency-ordered pass
// without building the lists or a trace: only each op's start and end, in each device's run order. Batch
// by batch: a batch's times depend only on when each device ended the batch before, so once every device
// ends a batch the same time after the previous one, the later batches are that batch shifted (when their
// ops last as long) and are not timed op by op. What a
// search that scores many candidate lists reads (the Zero Bubble search); the times equal
// time_static_lists' on the repeated lists, which equal the engine's (tests hold both). Returns nullopt
// where time_static_lists would: a list that names a stage of another device or a microbatch outside the
// batch, runs an op twice, deadlocks, or has a zero-length F, B, I or W.
#include <atomic>
#include <memory>
#include <optional>
#include <vector>

#include "sim/cost_model.h"
#include "sim/layout.h"
#include "sim/steady_state.h"

namespace pipesim {

struct RepeatedListRun {
  const PipelineLayout& layout;
  const std::vector<std::vector<Action>>& one_batch;  // per device: microbatches 0..m-1, no U
  int microbatches_per_batch = 0;
  int batches = 1;
  bool synchronized_steps = false;  // the optimizer step is a barrier over all devices
  std::vector<TimeNs> latency_ns;   // per sending device (FixedLatencyComm)
  // A search's best period so far: where batch 0 already proves every steady period of this run longer,
  // the run stops there (RepeatedListTimes::cannot_beat). The proof, with durations the same every batch:
  // every op depends on stage 1's forwards, so batch 0's timing from all devices free at 0 is its timing from
  // the device of stage 1 alone, a cycle of the batch-to-batch (max-plus) recurrence; that device therefore
  // ends each batch's steps at least batch 0's step end after the previous batch's (under a barrier, which
  // waits for every device, at least any device's batch-0 end plus the first device's steps), and a window's
  // period is the gaps between its batches' first forwards, which start as that device's steps end when its
  // list starts with microbatch 0's forward (the only case where it applies).
  const std::atomic<TimeNs>* period_to_beat_ns = nullptr;
};

// Times of a repeated run and the figures a steady-state window reads off them.
class RepeatedListTimes final : public SteadyStateProbe {
 public:
  // Stage 1's forward-start gaps (sim/steady_state.h), over microbatches [first, end).
  int forward_gap_repeat(int first_microbatch, int end_microbatch) const override;
  bool halves_agree(const RunWindow& window) const override;
  long ops() const override { return ops_; }

  // The figures compute_metrics reports for this window (sim/metrics.h), without the rest.
  struct WindowFigures {
    TimeNs period_ns = 0;
    TimeNs zb_batch_cost_ns = 0;  // the longest device span of the window's first batch, steps left out
    TimeNs makespan_ns = 0;
  };
  WindowFigures figures(const RunWindow& window) const;

  // Device d's op at `position` of its run order (batch b's op i at b * (batch ops + steps) + i).
  TimeNs start_ns(int device, size_t position) const { return time_of(device, position).start_ns; }
  TimeNs end_ns(int device, size_t position) const { return time_of(device, position).end_ns; }
  // The same by batch and index within the batch's ops and steps (no division: for walking a run).
  struct OpTime {
    TimeNs start_ns;
    TimeNs end_ns;
  };
  OpTime time_in_batch(int device, int batch, size_t index) const {
    const size_t length = batch_ops_[device] + steps_[device];
    if (batch < explicit_batches_) return device_times(device)[static_cast<size_t>(batch) * length + index];
    const OpTime copy = device_times(device)[static_cast<size_t>(explicit_batches_ - 1) * length + index];
    const TimeNs shift_ns = static_cast<TimeNs>(batch - explicit_batches_ + 1) * shift_ns_;
    return {copy.start_ns + shift_ns, copy.end_ns + shift_ns};
  }
  TimeNs makespan_ns() const { return makespan_ns_; }
  // Batches timed op by op; the ones after repeat the last of them shifted by repeat_shift_ns() each.
  int explicit_batches() const { return explicit_batches_; }
  // The run stopped after batch 0: its steady period exceeds RepeatedListRun::period_to_beat_ns. No figure
  // of it may be read.
  bool cannot_beat() const { return cannot_beat_; }
  TimeNs repeat_shift_ns() const { return shift_ns_; }

 private:
  friend std::optional<RepeatedListTimes> time_repeated_lists(const RepeatedListRun& run,
                                                              const CostModel& costs);
  TimeNs window_start_ns(int microbatch) const;
  OpTime time_of(size_t d, size_t position) const;
  TimeNs first_stage_forward_start_ns(int microbatch) const;

  int m_ = 1;
  int batches_ = 1;
  long ops_ = 0;
  TimeNs makespan_ns_ = 0;
  std::vector<size_t> batch_ops_;  // per device: one batch's ops; the device's steps follow them
  std::vector<size_t> steps_;      // per device: optimizer steps after each batch
  int explicit_batches_ = 1;
  bool cannot_beat_ = false;
  TimeNs shift_ns_ = 0;
  // Every op, device by device in run order: device d's batch b's op i at
  // device_offset_[d] + b * (batch_ops + steps) + i. Left uninitialised until timed.
  std::vector<size_t> device_offset_;  // devices + 1 entries
  std::unique_ptr<OpTime[]> op_times_;
  const OpTime* device_times(size_t d) const { return op_times_.get() + device_offset_[d]; }
  size_t device_ops(size_t d) const { return device_offset_[d + 1] - device_offset_[d]; }
  std::vector<TimeNs> first_stage_forward_start_ns_;  // per microbatch of the run
};

std::optional<RepeatedListTimes> time_repeated_lists(const RepeatedListRun& run, const CostModel& costs);

}  // namespace pipesim
