#include "sim/fast/repeated_list_timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "base/errors.h"
#include "base/value_ranges.h"
#include "sim/barrier_work.h"
#include "sim/op_rules.h"

namespace pipesim {
namespace {

constexpr TimeNs kUnknown = -1;
constexpr int kNone = -1;

// One op of the batch list, compiled once for every batch: ops are numbered device by device in list order
// (the "flat" index), and each names the flat index of the ops it waits for besides its device's previous
// one. Every batch has the same dependencies; only the devices' start times and, where the cost model
// says so, durations differ. An op without such an input names the sentinel after the last op, which
// ends at time 0 in every batch: the hot loops take the same path for every kind of op. Kept small (what
// depends only on the stage and kind is in per-(stage, kind) tables): a search scores many candidates, and
// their timing is bound by how much memory each one's pass touches.
struct BatchOp {
  int own = 0;    // same stage: B/I wait for their F, W for its B/I
  int input = 0;  // the other stage's output: F the previous stage's F, B/I the next's B/I
  int device = 0;
  int stage_kind = 0;  // stage * kOpKinds + kind
};

// The batch's ops with their dependencies resolved, in buffers each thread reuses from one call to the next.
struct CompiledBatch {
  std::vector<BatchOp> ops;          // by flat index, then the sentinel
  std::vector<size_t> device_begin;  // devices + 1 entries: device d's ops are [begin[d], begin[d + 1])
  std::vector<std::pair<int, int>> first_stage_forwards;  // (flat index, microbatch of the batch)
  // By stage * kOpKinds + kind:
  std::vector<TimeNs> input_latency_ns;  // when the op's input arrives after it ends (0: the same device)
  std::vector<int> consumer_device;      // the device of the op whose input this op makes, or kNone
  std::vector<TimeNs> duration_ns;       // the op's duration in every batch (-1 until read), where constant
  // By stage * m + microbatch: the flat index of its F and of its B or I.
  std::vector<int> forward_of;
  std::vector<int> input_grad_of;
  int sentinel() const { return static_cast<int>(ops.size()) - 1; }
};

TimeNs checked_sum_ns(TimeNs a, TimeNs b, const char* what) {
  TimeNs sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return add_time_ns(a, b, what);  // throws its range error
  return sum;
}

// False for a list time_static_lists refuses: a stage of another device, a microbatch outside the batch, an
// op run twice (F, or B/I, of one stage and microbatch), or an input no op makes (the engine would wait
// for it forever).
bool compile_batch(const RepeatedListRun& run, const CostModel& costs, bool same_every_batch,
                   CompiledBatch& batch) {
  const PipelineLayout& layout = run.layout;
  const int stages = layout.stages;
  const int m = run.microbatches_per_batch;
  const size_t cells = static_cast<size_t>(stages) * m;
  batch.forward_of.assign(cells, kNone);
  batch.input_grad_of.assign(cells, kNone);
  batch.device_begin.clear();
  batch.first_stage_forwards.clear();
  int count = 0;
  for (int d = 0; d < layout.devices; ++d) {
    batch.device_begin.push_back(static_cast<size_t>(count));
    for (const Action& a : run.one_batch[d]) {
      if (a.kind == OpKind::U || a.fused_with_next || a.stage < 0 || a.stage >= stages ||
          layout.device(a.stage) != d || a.microbatch < 0 || a.microbatch >= m)
        return false;
      const int i = count++;
      // Which op makes the forward and the input gradient of each (stage, microbatch): sim/op_rules.h.
      const OpRule rule = rule_of(a.kind);
      const size_t cell = static_cast<size_t>(a.stage) * m + a.microbatch;
      for (const auto& [bit, made_by] :
           {std::pair{kForwardDone, &batch.forward_of}, std::pair{kInputGradDone, &batch.input_grad_of}}) {
        if (!(rule.sets_done & bit)) continue;
        int& made = (*made_by)[cell];
        if (made != kNone) return false;  // run twice
        made = i;
      }
      if (rule.input_from == Neighbour::kPrevious && a.stage == 0)
        batch.first_stage_forwards.emplace_back(i, a.microbatch);
    }
  }
  batch.device_begin.push_back(static_cast<size_t>(count));
  const size_t stage_kinds = static_cast<size_t>(stages) * kOpKinds;
  batch.input_latency_ns.assign(stage_kinds, 0);
  batch.consumer_device.assign(stage_kinds, kNone);
  batch.duration_ns.assign(stage_kinds, -1);
  const auto latency_from = [&](int from_stage, int to_device) {
    const int from = layout.device(from_stage);
    return from == to_device ? 0 : run.latency_ns[from];
  };
  for (int s = 0; s < stages; ++s) {
    const int d = layout.device(s);
    for (const OpKind kind : {OpKind::F, OpKind::B, OpKind::I, OpKind::W}) {
      const OpRule rule = rule_of(kind);
      const size_t k = static_cast<size_t>(s) * kOpKinds + static_cast<size_t>(kind);
      if (rule.input_from == Neighbour::kPrevious && s > 0)
        batch.input_latency_ns[k] = latency_from(s - 1, d);
      if (rule.input_from == Neighbour::kNext && s + 1 < stages)
        batch.input_latency_ns[k] = latency_from(s + 1, d);
      if (rule.output_to == Neighbour::kNext && s + 1 < stages)
        batch.consumer_device[k] = layout.device(s + 1);
      if (rule.output_to == Neighbour::kPrevious && s > 0) batch.consumer_device[k] = layout.device(s - 1);
    }
  }
  batch.ops.resize(static_cast<size_t>(count) + 1);
  const int sentinel = count;
  batch.ops[sentinel] = {sentinel, sentinel, 0, 0};
  int i = 0;
  for (int d = 0; d < layout.devices; ++d) {
    for (const Action& a : run.one_batch[d]) {
      const size_t cell = static_cast<size_t>(a.stage) * m + a.microbatch;
      // The op its own (stage, microbatch) waits for, and the one whose transfer it waits for.
      const OpRule rule = rule_of(a.kind);
      int own = sentinel, input = sentinel;
      if (rule.needs_done == kForwardDone) own = batch.forward_of[cell];
      if (rule.needs_done == kInputGradDone) own = batch.input_grad_of[cell];
      if (rule.input_from == Neighbour::kPrevious && a.stage > 0) input = batch.forward_of[cell - m];
      if (rule.input_from == Neighbour::kNext && a.stage + 1 < stages) input = batch.input_grad_of[cell + m];
      if (own == kNone || input == kNone) return false;
      const int stage_kind = a.stage * kOpKinds + static_cast<int>(a.kind);
      if (same_every_batch && batch.duration_ns[stage_kind] < 0)
        batch.duration_ns[stage_kind] = costs.duration(a);
      BatchOp& op = batch.ops[i++];
      op.own = own;
      op.input = input;
      op.device = d;
      op.stage_kind = stage_kind;
    }
  }
  return true;
}

}  // namespace

std::optional<RepeatedListTimes> time_repeated_lists(const RepeatedListRun& run, const CostModel& costs) {
  const PipelineLayout& layout = run.layout;
  const int devices = layout.devices;
  const int m = run.microbatches_per_batch;
  const int batches = run.batches;
  const int total = m * batches;
  if (static_cast<int>(run.one_batch.size()) != devices ||
      static_cast<int>(run.latency_ns.size()) != devices || m < 1 || batches < 1 || layout.pipelines != 1)
    return std::nullopt;

  // Durations by kind and stage: each op's is read once, for batch 0, and serves every batch.
  const bool same_every_batch = costs.durations_by_kind_and_stage();
  // Thread-local buffers, reached through plain references below (each use of a thread_local with a
  // constructor would check that it was initialised).
  thread_local CompiledBatch compiled_buffer;
  CompiledBatch& compiled = compiled_buffer;
  if (!compile_batch(run, costs, same_every_batch, compiled)) return std::nullopt;
  const std::vector<BatchOp>& ops = compiled.ops;
  const std::vector<size_t>& device_begin = compiled.device_begin;
  const TimeNs* input_latency_ns = compiled.input_latency_ns.data();
  const TimeNs* duration_ns = compiled.duration_ns.data();
  const int sentinel = compiled.sentinel();
  const auto device_ops = [&](int d) { return device_begin[d + 1] - device_begin[d]; };

  RepeatedListTimes times;
  times.m_ = m;
  times.batches_ = batches;
  std::vector<std::vector<int>> step_stages(devices);
  std::vector<size_t> batch_length(devices);  // per device: one batch's ops and steps
  std::vector<size_t> shift(devices);         // per device: its batch 0 op times' position less flat index
  bool any_steps = false, all_steps = true;
  for (int d = 0; d < devices; ++d) {
    step_stages[d] = layout.stages_on(d);
    any_steps |= !step_stages[d].empty();
    all_steps &= !step_stages[d].empty();
    batch_length[d] = device_ops(d) + step_stages[d].size();
    times.batch_ops_.push_back(device_ops(d));
    times.steps_.push_back(step_stages[d].size());
    times.device_offset_.push_back(static_cast<size_t>(times.ops_));
    shift[d] = static_cast<size_t>(times.ops_) - device_begin[d];
    times.ops_ += static_cast<long>(batch_length[d] * batches);
  }
  times.device_offset_.push_back(static_cast<size_t>(times.ops_));
  // A device without a step never reaches the barrier the others wait at: the engine names the deadlock.
  if (run.synchronized_steps && any_steps && !all_steps) return std::nullopt;
  // Every entry is written before it is read: no value-initialisation of the largest array.
  times.op_times_.reset(new RepeatedListTimes::OpTime[times.ops_]);
  RepeatedListTimes::OpTime* op_times = times.op_times_.get();
  times.first_stage_forward_start_ns_.assign(total, kNever);

  // Where batch 0 bounds every steady period from below (RepeatedListRun::period_to_beat_ns).
  const int first_device = layout.device(0);
  const bool period_bound_applies = same_every_batch && batch_length[first_device] > 0 &&
                                    !run.one_batch[first_device].empty() &&
                                    run.one_batch[first_device].front() == forward(0, 0);

  std::vector<TimeNs> free_ns(devices, 0);
  // The current batch's op ends by flat index (each batch overwrites the one before), the sentinel's 0.
  thread_local std::vector<TimeNs> end_buffer;
  std::vector<TimeNs>& end_ns = end_buffer;
  end_ns.assign(ops.size(), kUnknown);
  end_ns[sentinel] = 0;
  thread_local std::vector<int> order_buffer;
  std::vector<int>& order = order_buffer;  // batch 0's flat indices in the order they were timed
  order.clear();

  // Times flat op i of `batch` from its device's free time and its inputs' ends (all timed); false where
  // time_static_lists refuses (a zero-length op, whose memory changes would need the engine's order).
  TimeNs* const end_at = end_ns.data();
  TimeNs* const free_at = free_ns.data();
  const BatchOp* const op_at = ops.data();
  const size_t* const shift_at = shift.data();
  const size_t* const batch_length_at = batch_length.data();
  const auto time_op = [&](size_t i, int batch) {
    const BatchOp& op = op_at[i];
    const TimeNs arrival_ns =
        checked_sum_ns(end_at[op.input], input_latency_ns[op.stage_kind], "a transfer's arrival");
    const TimeNs start = std::max(std::max(free_at[op.device], end_at[op.own]), arrival_ns);
    TimeNs duration = duration_ns[op.stage_kind];
    if (!same_every_batch) {
      Action a = run.one_batch[op.device][i - device_begin[op.device]];
      a.microbatch += batch * m;
      duration = costs.duration(a);
    }
    if (duration <= 0) return false;
    const TimeNs end = checked_sum_ns(start, duration, "an op's end");
    end_at[i] = end;
    free_at[op.device] = end;
    RepeatedListTimes::OpTime& slot = op_times[i + shift_at[op.device] + batch * batch_length_at[op.device]];
    slot.start_ns = start;
    slot.end_ns = end;
    return true;
  };

  // Batch 0: a worklist of devices, each running its list as far as its inputs are timed; a blocked device
  // waits for one input and only that input's op wakes it. The order ops were timed in respects every
  // dependency, and every batch has the same dependencies: later batches are timed in that order, no
  // worklist.
  // The first device ends batch 0's steps no earlier than its free time plus the durations of its ops not
  // yet timed and of its steps, and under a barrier no earlier than any device's free time plus its ops left
  // plus the first device's steps: once one of those passes the period to beat, so does every steady period
  // (RepeatedListRun::period_to_beat_ns), and batch 0 stops there.
  TimeNs beat_ns = kNever, first_device_steps_ns = 0;
  std::vector<TimeNs> left_ns;  // per device: its batch-0 ops' durations not yet timed
  if (run.period_to_beat_ns != nullptr && period_bound_applies) {
    beat_ns = run.period_to_beat_ns->load(std::memory_order_relaxed);
    left_ns.assign(devices, 0);
    // Sums past TimeNs' range (absurd inputs) drop the bound; a negative step is refused below.
    bool in_range = true;
    for (int d = 0; d < devices; ++d) {
      for (size_t i = device_begin[d]; i < device_begin[d + 1]; ++i)
        in_range &= !__builtin_add_overflow(left_ns[d], duration_ns[ops[i].stage_kind], &left_ns[d]);
    }
    for (int stage : step_stages[first_device]) {
      // What runs after the barrier (a lower bound on the device's end either way).
      const Action u = optimizer_step(stage, 0, run.synchronized_steps);
      const TimeNs step_ns = costs.duration(u) - (run.synchronized_steps ? costs.before_barrier_ns(u) : 0);
      in_range &=
          step_ns >= 0 && !__builtin_add_overflow(first_device_steps_ns, step_ns, &first_device_steps_ns);
    }
    if (!in_range) beat_ns = kNever;
  }
  const bool any_device_bounds = run.synchronized_steps;
  enum class FirstBatch { kTimed, kRefused, kCannotBeat };
  const auto time_first_batch = [&]() {
    std::vector<int> work;
    std::vector<char> queued(devices, 1);
    for (int d = devices - 1; d >= 0; --d) work.push_back(d);
    std::vector<size_t> cursor(device_begin.begin(), device_begin.end() - 1);
    std::vector<int> waiting_on(devices, kNone);
    while (!work.empty()) {
      const int d = work.back();
      work.pop_back();
      queued[d] = 0;
      const size_t device_end = device_begin[d + 1];
      size_t i = cursor[d];
      for (; i < device_end; ++i) {
        const BatchOp& op = ops[i];
        if (end_ns[op.own] == kUnknown) {  // an op later on this device: a deadlock
          waiting_on[d] = op.own;
          break;
        }
        if (end_ns[op.input] == kUnknown) {
          waiting_on[d] = op.input;
          break;
        }
        if (!time_op(i, 0)) return FirstBatch::kRefused;
        order.push_back(static_cast<int>(i));
        if (beat_ns != kNever && (d == first_device || any_device_bounds)) {
          left_ns[d] -= duration_ns[op.stage_kind];
          TimeNs bound_ns = 0;
          if (!__builtin_add_overflow(free_at[d], left_ns[d], &bound_ns) &&
              !__builtin_add_overflow(bound_ns, first_device_steps_ns, &bound_ns) && bound_ns > beat_ns)
            return FirstBatch::kCannotBeat;
        }
        const int consumer = compiled.consumer_device[op.stage_kind];
        if (consumer != kNone && waiting_on[consumer] == static_cast<int>(i)) {
          waiting_on[consumer] = kNone;
          if (!queued[consumer]) {
            queued[consumer] = 1;
            work.push_back(consumer);
          }
        }
      }
      cursor[d] = i;
    }
    // Otherwise a deadlock: the engine names it.
    return order.size() + 1 == ops.size() ? FirstBatch::kTimed : FirstBatch::kRefused;
  };

  // After each batch's ops, every device's optimizer steps, at the barrier where steps are synchronized:
  // every device reaches it as its last op of the batch ends.
  // Each device reaches it after its steps' work before the barrier (CostModel::before_barrier_ns), and
  // each step runs the rest after it.
  const auto time_steps = [&](int batch) {
    TimeNs barrier_ns = 0;
    if (run.synchronized_steps) {
      for (int d = 0; d < devices; ++d) {
        const std::optional<TimeNs> before = before_barrier_total(costs, layout, d, batch);
        if (!before) return false;
        barrier_ns =
            std::max(barrier_ns, checked_sum_ns(free_ns[d], *before, "a step's work before its barrier"));
      }
    }
    for (int d = 0; d < devices; ++d) {
      size_t position = times.device_offset_[d] + batch * batch_length[d] + device_ops(d);
      for (int stage : step_stages[d]) {
        const TimeNs start = std::max(free_ns[d], barrier_ns);
        const Action u = optimizer_step(stage, batch, run.synchronized_steps);
        const TimeNs duration = costs.duration(u) - (run.synchronized_steps ? costs.before_barrier_ns(u) : 0);
        if (duration < 0) return false;
        free_ns[d] = checked_sum_ns(start, duration, "an op's end");
        times.op_times_[position++] = {start, free_ns[d]};
      }
    }
    return true;
  };

  // Whether every batch after `batch` is `batch` shifted: every device ended `batch` (its last step) the
  // same time after it ended the one before, and every later op lasts as long as its copy in `batch`.
  const auto repeats_after = [&](int batch) {
    const auto step_end = [&](int d, int b) -> TimeNs {
      if (b < 0) return 0;  // every device starts the run free at time 0, with no output made
      return times.device_times(d)[batch_length[d] * (b + 1) - 1].end_ns;
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
        for (Action a : run.one_batch[d]) {
          a.microbatch += batch * m;
          const TimeNs duration = costs.duration(a);
          a.microbatch += offset;
          if (costs.duration(a) != duration) return false;
        }
        for (int stage : step_stages[d]) {
          const Action later = optimizer_step(stage, b, run.synchronized_steps),
                       now = optimizer_step(stage, batch, run.synchronized_steps);
          if (costs.duration(later) != costs.duration(now) ||
              costs.before_barrier_ns(later) != costs.before_barrier_ns(now))
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
  for (int batch = 0; batch < batches; ++batch) {
    if (batch == 0) {
      const FirstBatch outcome = time_first_batch();
      if (outcome == FirstBatch::kRefused) return std::nullopt;
      if (outcome == FirstBatch::kCannotBeat) {
        times.cannot_beat_ = true;
        return times;
      }
    } else {
      for (const int i : order) {
        if (!time_op(static_cast<size_t>(i), batch)) return std::nullopt;
      }
    }
    if (!time_steps(batch)) return std::nullopt;
    if (batch == 0 && run.period_to_beat_ns != nullptr && period_bound_applies) {
      const int d = layout.device(0);
      const TimeNs step_end_ns = op_times[shift[d] + device_begin[d] + batch_length[d] - 1].end_ns;
      if (step_end_ns > run.period_to_beat_ns->load(std::memory_order_relaxed)) {
        times.cannot_beat_ = true;
        return times;
      }
    }
    for (const auto& [i, microbatch] : compiled.first_stage_forwards) {
      const int d = ops[i].device;
      times.first_stage_forward_start_ns_[microbatch + batch * m] =
          op_times[i + shift[d] + batch * batch_length[d]].start_ns;
    }
    times.explicit_batches_ = batch + 1;
    // From batch 0 on: under a barrier with equal steps every device ends batch 0 at the same time, as all
    // began it, so one batch times the run (the Zero Bubble search's barrier candidates).
    if (batch + 1 < batches && repeats_after(batch)) break;
  }
  for (int d = 0; d < devices; ++d) {
    const size_t length = times.device_ops(d);
    if (length > 0) times.makespan_ns_ = std::max(times.makespan_ns_, times.time_of(d, length - 1).end_ns);
  }
  // The thread's buffers stay for its next call (a search times many candidates), unless a batch of over
  // 2^18 ops made them large (7 MB and more): a long run's thread would otherwise hold them for good.
  if (ops.size() > (1u << 18)) {
    compiled = CompiledBatch{};
    std::vector<TimeNs>().swap(end_ns);
    std::vector<int>().swap(order);
  }
  return times;
}

RepeatedListTimes::OpTime RepeatedListTimes::time_of(size_t d, size_t position) const {
  const size_t batch_length = batch_ops_[d] + steps_[d];
  return time_in_batch(static_cast<int>(d), static_cast<int>(position / batch_length),
                       position % batch_length);
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
