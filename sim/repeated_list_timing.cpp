#include "sim/repeated_list_timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "sim/errors.h"
#include "sim/value_ranges.h"

namespace pipesim {
namespace {

constexpr TimeNs kUnknown = -1;

// The outputs of one (stage, microbatch of a batch), for the batch named beside each. One batch's cells
// serve all batches: a stage's output of batch b + 1 can only be timed after its consumer has read the
// output of batch b (the consumer's op of batch b precedes, in the producer's list, an op that waits for
// the consumer). A read that finds a later batch returns nullopt all the same, never a wrong time.
struct Cell {
  TimeNs forward_end_ns = kUnknown;
  TimeNs input_grad_end_ns = kUnknown;  // B or I
  int forward_batch = -1;
  int input_grad_batch = -1;
};

// One op of a batch list with what its inputs need, worked out once for every batch.
struct BatchOp {
  Action action;
  int input_stage = -1;         // the other stage whose output it waits for (F: previous, B/I: next)
  TimeNs input_latency_ns = 0;  // 0 when that stage is on this device
  TimeNs duration_ns = 0;       // in every batch, where the cost model says so
};

TimeNs checked_sum_ns(TimeNs a, TimeNs b, const char* what) {
  TimeNs sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return add_time_ns(a, b, what);  // throws its range error
  return sum;
}

}  // namespace

std::optional<RepeatedListTimes> time_repeated_lists(const RepeatedListRun& run, const CostModel& costs) {
  const PipelineLayout& layout = run.layout;
  const int devices = layout.devices;
  const int stages = layout.stages;
  const int m = run.microbatches_per_batch;
  const int batches = run.batches;
  const int total = m * batches;
  if (static_cast<int>(run.one_batch.size()) != devices ||
      static_cast<int>(run.latency_ns.size()) != devices || m < 1 || batches < 1 || layout.pipelines != 1)
    return std::nullopt;

  RepeatedListTimes times;
  times.m_ = m;
  times.batches_ = batches;
  // Durations by kind and stage: each op's is read once, for batch 0, and serves every batch.
  const bool same_every_batch = costs.durations_by_kind_and_stage();
  std::vector<TimeNs> duration_by_stage_kind(same_every_batch ? static_cast<size_t>(stages) * kOpKinds : 0,
                                             -1);
  std::vector<std::vector<BatchOp>> ops(devices);
  std::vector<std::vector<int>> step_stages(devices);
  for (int d = 0; d < devices; ++d) {
    step_stages[d] = layout.stages_on(d);
    for (const Action& a : run.one_batch[d]) {
      if (a.kind == OpKind::U || a.fused_with_next || a.stage < 0 || a.stage >= stages ||
          layout.device(a.stage) != d || a.microbatch < 0 || a.microbatch >= m)
        return std::nullopt;
      BatchOp op{a};
      if (a.kind == OpKind::F && a.stage > 0) op.input_stage = a.stage - 1;
      if ((a.kind == OpKind::B || a.kind == OpKind::I) && a.stage + 1 < stages) op.input_stage = a.stage + 1;
      if (op.input_stage >= 0) {
        const int from = layout.device(op.input_stage);
        op.input_latency_ns = from == d ? 0 : run.latency_ns[from];
      }
      if (same_every_batch) {  // one read per (stage, kind)
        TimeNs& known_ns =
            duration_by_stage_kind[static_cast<size_t>(a.stage) * kOpKinds + static_cast<size_t>(a.kind)];
        if (known_ns < 0) known_ns = costs.duration(a);
        op.duration_ns = known_ns;
      }
      ops[d].push_back(op);
    }
    times.batch_ops_.push_back(ops[d].size());
    times.steps_.push_back(step_stages[d].size());
    const size_t length = (ops[d].size() + step_stages[d].size()) * batches;
    times.device_offset_.push_back(static_cast<size_t>(times.ops_));
    times.ops_ += static_cast<long>(length);
  }
  times.device_offset_.push_back(static_cast<size_t>(times.ops_));
  // Every entry is written before it is read: no value-initialisation of the largest array.
  times.op_times_.reset(new RepeatedListTimes::OpTime[times.ops_]);
  times.first_stage_forward_start_ns_.assign(total, kNever);

  std::vector<Cell> cells(static_cast<size_t>(stages) * m);
  const auto cell = [&](int stage, int mb) -> Cell& { return cells[static_cast<size_t>(stage) * m + mb]; };
  bool out_of_order = false;               // a cell held a later batch than its reader's
  std::vector<size_t> cursor(devices, 0);  // position in the device's run order
  std::vector<int> cursor_batch(devices, 0);
  std::vector<size_t> cursor_index(devices, 0);  // within the batch: its ops, then its steps
  std::vector<TimeNs> free_ns(devices, 0);
  // Barriers: per step, devices arrived and the latest arrival (the end of each device's op before it).
  std::vector<int> arrived(run.synchronized_steps ? batches : 0, 0);
  std::vector<TimeNs> barrier_ns(arrived.size(), 0);
  std::vector<char> reached_barrier(devices, 0);  // for the step of the device's current batch

  // A worklist of devices, as time_static_lists: each runs its list as far as its inputs are timed, here up
  // to the end of the round's batch.
  std::vector<int> work;
  std::vector<char> queued(devices, 0);
  std::vector<size_t> limit(devices, 0);
  const auto wake = [&](int device) {
    if (!queued[device]) {
      queued[device] = 1;
      work.push_back(device);
    }
  };
  // What each blocked device waits for: an output just timed wakes only the device waiting for it.
  std::vector<const TimeNs*> waiting_on(devices, nullptr);
  const auto wake_if_waiting = [&](int device, const TimeNs& output) {
    if (waiting_on[device] == &output) {
      waiting_on[device] = nullptr;
      wake(device);
    }
  };
  // Whether every batch after `batch` is `batch` shifted: every device ended `batch` (its last step) the
  // same time after it ended the one before, and every later op lasts as long as its copy in `batch`.
  const auto repeats_after = [&](int batch) {
    const auto step_end = [&](int d, int b) -> TimeNs {
      if (b < 0) return 0;  // every device starts the run free at time 0, with no output made
      return times.device_times(d)[(ops[d].size() + step_stages[d].size()) * (b + 1) - 1].end_ns;
    };
    const TimeNs shift_ns = step_end(0, batch) - step_end(0, batch - 1);
    TimeNs last_end_ns = 0;
    for (int d = 0; d < devices; ++d) {
      if (step_end(d, batch) - step_end(d, batch - 1) != shift_ns) return false;
      last_end_ns = std::max(last_end_ns, step_end(d, batch));
    }
    TimeNs shifted_ns = 0;  // the last batch's shift: no derived time may leave TimeNs' range
    if (shift_ns < 0 ||
        __builtin_mul_overflow(shift_ns, static_cast<TimeNs>(batches - 1 - batch), &shifted_ns) ||
        __builtin_add_overflow(last_end_ns, shifted_ns, &shifted_ns))
      return false;
    for (int b = batch + 1; b < batches && !same_every_batch; ++b) {
      const int offset = (b - batch) * m;
      for (int d = 0; d < devices; ++d) {
        for (const BatchOp& op : ops[d]) {
          Action a = op.action;
          a.microbatch += batch * m;
          const TimeNs duration = costs.duration(a);
          a.microbatch += offset;
          if (costs.duration(a) != duration) return false;
        }
        for (int stage : step_stages[d]) {
          if (costs.duration(optimizer_step(stage, b, run.synchronized_steps)) !=
              costs.duration(optimizer_step(stage, batch, run.synchronized_steps)))
            return false;
        }
      }
    }
    times.shift_ns_ = shift_ns;
    return true;
  };

  // Batch by batch: once one batch ends every device's step exactly the same time after the previous
  // batch's did, every later batch repeats it shifted by that time (its timing is a max-plus function of
  // those ends alone), provided its ops last as long: those batches are not timed op by op.
  for (int round = 0; round < batches; ++round) {
    for (int d = 0; d < devices; ++d) {
      limit[d] = (ops[d].size() + step_stages[d].size()) * (round + 1);
      wake(d);
    }
    while (!work.empty()) {
      const int d = work.back();
      work.pop_back();
      queued[d] = 0;
      const std::vector<BatchOp>& list = ops[d];
      const size_t batch_length = list.size() + step_stages[d].size();
      RepeatedListTimes::OpTime* op_times = times.op_times_.get() + times.device_offset_[d];
      while (cursor[d] < limit[d]) {
        const int batch = cursor_batch[d];
        const size_t index = cursor_index[d];
        TimeNs start = free_ns[d];
        TimeNs duration = 0;
        if (index < list.size()) {
          const BatchOp& op = list[index];
          Action a = op.action;
          Cell& own = cell(a.stage, a.microbatch);
          const int batch_mb = a.microbatch;
          a.microbatch += batch * m;
          const auto after = [&](const TimeNs& end_ns, int end_batch, TimeNs latency_ns) {
            if (end_batch != batch) {
              out_of_order |= end_batch > batch;
              waiting_on[d] = &end_ns;
              return false;
            }
            start = std::max(start, checked_sum_ns(end_ns, latency_ns, "a transfer's arrival"));
            return true;
          };
          bool ready = true;
          switch (a.kind) {
            case OpKind::F:
              if (op.input_stage >= 0) {
                const Cell& input = cell(op.input_stage, batch_mb);
                ready = after(input.forward_end_ns, input.forward_batch, op.input_latency_ns);
              }
              break;
            case OpKind::B:
            case OpKind::I:
              ready = after(own.forward_end_ns, own.forward_batch, 0);
              if (ready && op.input_stage >= 0) {
                const Cell& input = cell(op.input_stage, batch_mb);
                ready = after(input.input_grad_end_ns, input.input_grad_batch, op.input_latency_ns);
              }
              break;
            case OpKind::W:
              ready = after(own.input_grad_end_ns, own.input_grad_batch, 0);
              break;
            case OpKind::U:
              break;
          }
          if (out_of_order) return std::nullopt;
          if (!ready) break;
          duration = same_every_batch ? op.duration_ns : costs.duration(a);
          // Same rule as time_static_lists: a zero-length op's memory changes would need the engine's order.
          if (duration <= 0) return std::nullopt;
          const TimeNs end = checked_sum_ns(start, duration, "an op's end");
          switch (a.kind) {
            case OpKind::F:
              if (own.forward_batch >= batch) return std::nullopt;  // run twice
              own.forward_end_ns = end;
              own.forward_batch = batch;
              if (a.stage == 0) times.first_stage_forward_start_ns_[a.microbatch] = start;
              if (a.stage + 1 < stages) wake_if_waiting(layout.device(a.stage + 1), own.forward_end_ns);
              break;
            case OpKind::B:
            case OpKind::I:
              if (own.input_grad_batch >= batch) return std::nullopt;  // run twice
              own.input_grad_end_ns = end;
              own.input_grad_batch = batch;
              if (a.stage > 0) wake_if_waiting(layout.device(a.stage - 1), own.input_grad_end_ns);
              break;
            case OpKind::W:
            case OpKind::U:
              break;
          }
        } else {
          const int stage = step_stages[d][index - list.size()];
          if (run.synchronized_steps) {
            if (!reached_barrier[d]) {
              // The device reaches the barrier as it asks for its first step of the batch: when its last op
              // ended.
              reached_barrier[d] = 1;
              barrier_ns[batch] = std::max(barrier_ns[batch], free_ns[d]);
              if (++arrived[batch] == devices) {
                for (int other = 0; other < devices; ++other) wake(other);
              }
            }
            if (arrived[batch] < devices) break;
            start = std::max(start, barrier_ns[batch]);
          }
          duration = costs.duration(optimizer_step(stage, batch, run.synchronized_steps));
          if (duration < 0) return std::nullopt;
          if (index + 1 == batch_length) reached_barrier[d] = 0;
        }
        free_ns[d] = checked_sum_ns(start, duration, "an op's end");
        op_times[cursor[d]] = {start, free_ns[d]};
        ++cursor[d];
        if (++cursor_index[d] == batch_length) {
          cursor_index[d] = 0;
          ++cursor_batch[d];
        }
      }
    }
    for (int d = 0; d < devices; ++d) {
      if (cursor[d] != limit[d]) return std::nullopt;  // a deadlock: the engine names it
    }
    times.explicit_batches_ = round + 1;
    // From batch 0 on: under a barrier with equal steps every device ends batch 0 at the same time, as all
    // began it, so one batch times the run (the Zero Bubble search's barrier candidates).
    if (round + 1 < batches && repeats_after(round)) break;
  }
  for (int d = 0; d < devices; ++d) {
    const size_t length = times.device_ops(d);
    if (length > 0) times.makespan_ns_ = std::max(times.makespan_ns_, times.time_of(d, length - 1).end_ns);
  }
  return times;
}

RepeatedListTimes::OpTime RepeatedListTimes::time_of(size_t d, size_t position) const {
  const size_t batch_length = batch_ops_[d] + steps_[d];
  const auto last = static_cast<size_t>(explicit_batches_ - 1);
  const size_t batch = position / batch_length;
  if (batch <= last) return device_times(d)[position];
  const OpTime copy = device_times(d)[last * batch_length + position % batch_length];
  const TimeNs shift_ns = static_cast<TimeNs>(batch - last) * shift_ns_;
  return {copy.start_ns + shift_ns, copy.end_ns + shift_ns};
}

TimeNs RepeatedListTimes::first_stage_forward_start_ns(int microbatch) const {
  const int last = explicit_batches_ - 1;
  const int batch = microbatch / m_;
  if (batch <= last) return first_stage_forward_start_ns_[microbatch];
  const TimeNs copy = first_stage_forward_start_ns_[last * m_ + microbatch % m_];
  return copy == kNever ? kNever : copy + (batch - last) * shift_ns_;
}

// A window of a repeated one-batch list starts at a batch: its cycle is a batch (sim/steady_state.h).
TimeNs RepeatedListTimes::window_start_ns(int microbatch) const {
  if (microbatch % m_ != 0 || microbatch / m_ >= batches_) {
    throw ScheduleError(
        fmt::format("repeated lists: a window boundary at microbatch {} is not a batch start "
                    "of the {} batches",
                    microbatch, batches_));
  }
  return first_stage_forward_start_ns(microbatch);
}

int RepeatedListTimes::forward_gap_repeat(int first_microbatch, int end_microbatch) const {
  const int count = end_microbatch - first_microbatch;
  if (count < 2) return 0;
  std::vector<TimeNs> start(count + 1, kNever);
  const int total = static_cast<int>(first_stage_forward_start_ns_.size());
  for (int mb = first_microbatch; mb <= end_microbatch && mb < total; ++mb)
    start[mb - first_microbatch] = first_stage_forward_start_ns(mb);
  return pipesim::forward_gap_repeat(start);
}

bool RepeatedListTimes::halves_agree(const RunWindow& window) const {
  HalvesTally tally;
  tally.begin_ns = window_start_ns(window.first_microbatch);
  tally.middle_ns = window_start_ns(window.middle_microbatch());
  tally.end_ns = window_start_ns(window.end_microbatch);
  const size_t devices = batch_ops_.size();
  tally.first_busy_ns.assign(devices, 0);
  tally.second_busy_ns.assign(devices, 0);
  tally.work_ns.assign(devices, 0);
  tally.ops = ops_;
  tally.total_microbatches = m_ * batches_;
  const bool ordered =
      tally.begin_ns <= tally.middle_ns && tally.middle_ns <= tally.end_ns && tally.end_ns != kNever;
  std::vector<TimeNs> prefix_ns;
  for (size_t d = 0; d < devices; ++d) {
    const size_t batch_length = batch_ops_[d] + steps_[d];
    const size_t timed = static_cast<size_t>(explicit_batches_) * batch_length;
    // Busy time before each timed op, and the work of the timed batches and of one shifted batch.
    prefix_ns.assign(timed + 1, 0);
    TimeNs timed_work_ns = 0, last_batch_work_ns = 0;
    for (size_t i = 0, index = 0; i < timed; ++i, index = index + 1 == batch_length ? 0 : index + 1) {
      const OpTime& op = device_times(d)[i];
      prefix_ns[i + 1] = prefix_ns[i] + (op.end_ns - op.start_ns);
      if (index < batch_ops_[d]) {  // steps are not work
        timed_work_ns += op.end_ns - op.start_ns;
        if (i >= timed - batch_length) last_batch_work_ns += op.end_ns - op.start_ns;
      }
    }
    tally.work_ns[d] = timed_work_ns + (batches_ - explicit_batches_) * last_batch_work_ns;
    const TimeNs last_batch_busy_ns = prefix_ns[timed] - prefix_ns[timed - batch_length];
    const auto busy_until = [&](size_t position) {  // before the op at `position`
      if (position <= timed) return prefix_ns[position];
      const size_t past = position - timed;
      return prefix_ns[timed] + static_cast<TimeNs>(past / batch_length) * last_batch_busy_ns +
             prefix_ns[timed - batch_length + past % batch_length] - prefix_ns[timed - batch_length];
    };
    // Every op's part before t: the ops ending by t whole, the one running at t in part (a device's ops
    // never overlap, so this is the trace's sum of overlaps).
    const auto busy_before = [&](TimeNs t) {
      size_t low = 0, high = device_ops(d);  // the first op that ends after t
      while (low < high) {
        const size_t mid_position = (low + high) / 2;
        if (time_of(d, mid_position).end_ns > t) {
          high = mid_position;
        } else {
          low = mid_position + 1;
        }
      }
      if (low == device_ops(d)) return busy_until(low);
      return busy_until(low) + std::max<TimeNs>(0, t - time_of(d, low).start_ns);
    };
    if (ordered) {
      const TimeNs middle_ns = busy_before(tally.middle_ns);
      tally.first_busy_ns[d] = middle_ns - busy_before(tally.begin_ns);
      tally.second_busy_ns[d] = busy_before(tally.end_ns) - middle_ns;
      continue;
    }
    for (int b = 0; b < batches_; ++b) {  // boundaries out of order: the trace's sum itself
      const int copy = std::min(b, explicit_batches_ - 1);
      const TimeNs shift_ns = static_cast<TimeNs>(b - copy) * shift_ns_;
      const OpTime* op_times = device_times(d) + copy * batch_length;
      for (size_t i = 0; i < batch_length; ++i) {
        const TimeNs start = op_times[i].start_ns + shift_ns;
        const TimeNs end = op_times[i].end_ns + shift_ns;
        tally.first_busy_ns[d] +=
            std::max<TimeNs>(0, std::min(end, tally.middle_ns) - std::max(start, tally.begin_ns));
        tally.second_busy_ns[d] +=
            std::max<TimeNs>(0, std::min(end, tally.end_ns) - std::max(start, tally.middle_ns));
      }
    }
  }
  return pipesim::halves_agree(tally, window);
}

RepeatedListTimes::WindowFigures RepeatedListTimes::figures(const RunWindow& window) const {
  const TimeNs begin_ns = window_start_ns(window.first_microbatch);
  const TimeNs end_ns =
      window.end_microbatch < batches_ * m_ ? window_start_ns(window.end_microbatch) : makespan_ns_;
  WindowFigures figures;
  figures.period_ns = window.per_batch(end_ns - begin_ns, m_);
  const int first_batch = window.first_microbatch / m_;
  figures.makespan_ns = makespan_ns_;
  for (size_t d = 0; d < batch_ops_.size(); ++d) {
    if (batch_ops_[d] == 0 || first_batch >= batches_) continue;
    // A device's ops run in list order, which is time order: the batch's first op starts its span and
    // its last F, B, I or W ends it.
    const size_t first = static_cast<size_t>(first_batch) * (batch_ops_[d] + steps_[d]);
    const TimeNs span_ns = time_of(d, first + batch_ops_[d] - 1).end_ns - time_of(d, first).start_ns;
    figures.zb_batch_cost_ns = std::max(figures.zb_batch_cost_ns, span_ns);
  }
  return figures;
}

}  // namespace pipesim
