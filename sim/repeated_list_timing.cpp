#include "sim/repeated_list_timing.h"

#include <algorithm>
#include <numeric>

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
      static_cast<int>(run.latency_ns.size()) != devices || m < 1 || batches < 1)
    return std::nullopt;

  RepeatedListTimes times;
  times.m_ = m;
  times.batches_ = batches;
  std::vector<std::vector<BatchOp>> ops(devices);
  std::vector<std::vector<int>> step_stages(devices);
  for (int d = 0; d < devices; ++d) {
    step_stages[d] = layout.stages_on(d);
    for (const Action& a : run.one_batch[d]) {
      if (a.kind == OpKind::U || a.stage < 0 || a.stage >= stages || layout.device(a.stage) != d ||
          a.microbatch < 0 || a.microbatch >= m)
        return std::nullopt;
      BatchOp op{a};
      if (a.kind == OpKind::F && a.stage > 0) op.input_stage = a.stage - 1;
      if ((a.kind == OpKind::B || a.kind == OpKind::I) && a.stage + 1 < stages) op.input_stage = a.stage + 1;
      if (op.input_stage >= 0) {
        const int from = layout.device(op.input_stage);
        op.input_latency_ns = from == d ? 0 : run.latency_ns[from];
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

  // A worklist of devices, as time_static_lists: each runs its list as far as its inputs are timed.
  std::vector<int> work(devices);
  std::iota(work.begin(), work.end(), 0);
  std::vector<char> queued(devices, 1);
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
  while (!work.empty()) {
    const int d = work.back();
    work.pop_back();
    queued[d] = 0;
    const std::vector<BatchOp>& list = ops[d];
    const size_t batch_length = list.size() + step_stages[d].size();
    const size_t length = batch_length * batches;
    RepeatedListTimes::OpTime* op_times = times.op_times_.get() + times.device_offset_[d];
    while (cursor[d] < length) {
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
        duration = costs.duration(a);
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
    const size_t length = times.device_ops(d);
    if (cursor[d] != length) return std::nullopt;  // a deadlock: the engine names it
    if (length > 0)
      times.makespan_ns_ = std::max(times.makespan_ns_, times.device_times(d)[length - 1].end_ns);
  }
  return times;
}

std::vector<TimeNs> RepeatedListTimes::batch_start_ns(int batches) const {
  std::vector<TimeNs> starts(batches, kNever);
  for (int b = 0; b < std::min(batches, batches_); ++b) starts[b] = first_stage_forward_start_ns_[b * m_];
  return starts;
}

int RepeatedListTimes::forward_gap_repeat(int first_microbatch, int end_microbatch) const {
  const int count = end_microbatch - first_microbatch;
  if (count < 2) return 0;
  std::vector<TimeNs> start(count + 1, kNever);
  const int total = static_cast<int>(first_stage_forward_start_ns_.size());
  for (int mb = first_microbatch; mb <= end_microbatch && mb < total; ++mb)
    start[mb - first_microbatch] = first_stage_forward_start_ns_[mb];
  return pipesim::forward_gap_repeat(start);
}

bool RepeatedListTimes::halves_agree(const RunWindow& window, int m) const {
  const std::vector<TimeNs> starts = batch_start_ns(window.total_batches);
  const int mid = window.first_batch + window.batches() / 2;
  HalvesTally tally;
  tally.begin_ns = starts.at(window.first_batch);
  tally.middle_ns = starts.at(mid);
  tally.end_ns = starts.at(window.end_batch);
  const size_t devices = batch_ops_.size();
  tally.first_busy_ns.assign(devices, 0);
  tally.second_busy_ns.assign(devices, 0);
  tally.work_ns.assign(devices, 0);
  tally.ops = ops_;
  tally.total_microbatches = m_ * batches_;
  for (size_t d = 0; d < devices; ++d) {
    const size_t batch_length = batch_ops_[d] + steps_[d];
    const OpTime* op_times = device_times(d);
    for (size_t i = 0, index = 0; i < device_ops(d); ++i) {
      const TimeNs start = op_times[i].start_ns;
      const TimeNs end = op_times[i].end_ns;
      tally.first_busy_ns[d] +=
          std::max<TimeNs>(0, std::min(end, tally.middle_ns) - std::max(start, tally.begin_ns));
      tally.second_busy_ns[d] +=
          std::max<TimeNs>(0, std::min(end, tally.end_ns) - std::max(start, tally.middle_ns));
      if (index < batch_ops_[d]) tally.work_ns[d] += end - start;  // steps are not work
      if (++index == batch_length) index = 0;
    }
  }
  return pipesim::halves_agree(tally, window, m);
}

RepeatedListTimes::WindowFigures RepeatedListTimes::figures(const RunWindow& window) const {
  const std::vector<TimeNs> starts = batch_start_ns(window.total_batches);
  const TimeNs begin_ns = starts.at(window.first_batch);
  const TimeNs end_ns = window.end_batch < window.total_batches ? starts.at(window.end_batch) : makespan_ns_;
  WindowFigures figures;
  figures.period_ns = (end_ns - begin_ns) / window.batches();
  figures.makespan_ns = makespan_ns_;
  for (size_t d = 0; d < batch_ops_.size(); ++d) {
    if (batch_ops_[d] == 0 || window.first_batch >= batches_) continue;
    // A device's ops run in list order, which is time order: the batch's first op starts its span and
    // its last F, B, I or W ends it.
    const size_t first = static_cast<size_t>(window.first_batch) * (batch_ops_[d] + steps_[d]);
    const TimeNs span_ns =
        device_times(d)[first + batch_ops_[d] - 1].end_ns - device_times(d)[first].start_ns;
    figures.zb_batch_cost_ns = std::max(figures.zb_batch_cost_ns, span_ns);
  }
  return figures;
}

}  // namespace pipesim
