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

using OpTime = RepeatedListTimes::OpTime;

enum class FirstBatch { kTimed, kRefused, kCannotBeat };

// The pass over the batches of one call, over the compiled batch and the thread's buffers. Writes the op
// times into RepeatedListTimes' array through the pointers set_output gives it (time_repeated_lists, the
// class's friend, owns the rest of its fields).
class BatchTimer {
 public:
  BatchTimer(const RepeatedListRun& run, const CostModel& costs, const CompiledBatch& compiled,
             bool same_every_batch, std::vector<TimeNs>& end_ns, std::vector<int>& order)
      : run_(run),
        costs_(costs),
        layout_(run.layout),
        compiled_(compiled),
        ops_(compiled.ops),
        device_begin_(compiled.device_begin),
        input_latency_ns_(compiled.input_latency_ns.data()),
        duration_ns_(compiled.duration_ns.data()),
        devices_(run.layout.devices),
        m_(run.microbatches_per_batch),
        batches_(run.batches),
        same_every_batch_(same_every_batch),
        first_device_(run.layout.device(0)),
        step_stages_(devices_),
        batch_length_(devices_),
        shift_(devices_),
        end_ns_(end_ns),
        order_(order) {}

  // Lays each device's batches out in the times' array: its ops then its steps, batch after batch.
  // False where a device without a step never reaches the barrier the others wait at (the engine names the
  // deadlock).
  bool lay_out(std::vector<size_t>& batch_ops, std::vector<size_t>& steps, std::vector<size_t>& device_offset,
               long& ops);
  void set_output(OpTime* op_times, const size_t* device_offset);
  void start_period_bound();
  FirstBatch time_first_batch();
  inline bool time_later_batch(int batch);
  bool time_steps(int batch);
  bool batch0_cannot_beat() const;
  void record_first_stage_forward_starts(int batch, std::vector<TimeNs>& start_ns) const;
  bool repeats_after(int batch, TimeNs& shift_ns) const;

 private:
  size_t device_ops(int d) const { return device_begin_[d + 1] - device_begin_[d]; }
  inline bool time_op(size_t i, int batch);
  // Device d's batch-b step end, or 0 before batch 0: every device starts the run free at time 0, with no
  // output made.
  TimeNs step_end_ns(int d, int b) const {
    if (b < 0) return 0;
    return op_times_[device_offset_[d] + batch_length_[d] * (b + 1) - 1].end_ns;
  }
  bool later_batches_last_as_long(int batch) const;

  const RepeatedListRun& run_;
  const CostModel& costs_;
  const PipelineLayout& layout_;
  const CompiledBatch& compiled_;
  const std::vector<BatchOp>& ops_;
  const std::vector<size_t>& device_begin_;
  const TimeNs* const input_latency_ns_;
  const TimeNs* const duration_ns_;
  const int devices_;
  const int m_;
  const int batches_;
  const bool same_every_batch_;
  const int first_device_;
  bool period_bound_applies_ = false;
  std::vector<std::vector<int>> step_stages_;
  std::vector<size_t> batch_length_;  // per device: one batch's ops and steps
  std::vector<size_t> shift_;         // per device: its batch 0 op times' position less flat index
  std::vector<TimeNs> free_ns_;
  // The current batch's op ends by flat index (each batch overwrites the one before), the sentinel's 0.
  std::vector<TimeNs>& end_ns_;
  std::vector<int>& order_;  // batch 0's flat indices in the order they were timed
  OpTime* op_times_ = nullptr;
  const size_t* device_offset_ = nullptr;
  // The period bound (time_first_batch).
  TimeNs beat_ns_ = kNever;
  TimeNs first_device_steps_ns_ = 0;
  std::vector<TimeNs> left_ns_;  // per device: its batch-0 ops' durations not yet timed
};

bool BatchTimer::lay_out(std::vector<size_t>& batch_ops, std::vector<size_t>& steps,
                         std::vector<size_t>& device_offset, long& ops) {
  bool any_steps = false, all_steps = true;
  for (int d = 0; d < devices_; ++d) {
    step_stages_[d] = layout_.stages_on(d);
    any_steps |= !step_stages_[d].empty();
    all_steps &= !step_stages_[d].empty();
    batch_length_[d] = device_ops(d) + step_stages_[d].size();
    batch_ops.push_back(device_ops(d));
    steps.push_back(step_stages_[d].size());
    device_offset.push_back(static_cast<size_t>(ops));
    shift_[d] = static_cast<size_t>(ops) - device_begin_[d];
    ops += static_cast<long>(batch_length_[d] * batches_);
  }
  device_offset.push_back(static_cast<size_t>(ops));
  return !(run_.synchronized_steps && any_steps && !all_steps);
}

void BatchTimer::set_output(OpTime* op_times, const size_t* device_offset) {
  op_times_ = op_times;
  device_offset_ = device_offset;
  // Where batch 0 bounds every steady period from below (RepeatedListRun::period_to_beat_ns).
  period_bound_applies_ = same_every_batch_ && batch_length_[first_device_] > 0 &&
                          !run_.one_batch[first_device_].empty() &&
                          run_.one_batch[first_device_].front() == forward(0, 0);
  free_ns_.assign(devices_, 0);
  end_ns_.assign(ops_.size(), kUnknown);
  end_ns_[compiled_.sentinel()] = 0;
  order_.clear();
}

// Times flat op i of `batch` from its device's free time and its inputs' ends (all timed); false where
// time_static_lists refuses (a zero-length op, whose memory changes would need the engine's order).
inline bool BatchTimer::time_op(size_t i, int batch) {
  const BatchOp& op = ops_[i];
  TimeNs* const end_at = end_ns_.data();
  const TimeNs arrival_ns =
      checked_sum_ns(end_at[op.input], input_latency_ns_[op.stage_kind], "a transfer's arrival");
  const TimeNs start = std::max(std::max(free_ns_[op.device], end_at[op.own]), arrival_ns);
  TimeNs duration = duration_ns_[op.stage_kind];
  if (!same_every_batch_) {
    Action a = run_.one_batch[op.device][i - device_begin_[op.device]];
    a.microbatch += batch * m_;
    duration = costs_.duration(a);
  }
  if (duration <= 0) return false;
  const TimeNs end = checked_sum_ns(start, duration, "an op's end");
  end_at[i] = end;
  free_ns_[op.device] = end;
  OpTime& slot = op_times_[i + shift_[op.device] + batch * batch_length_[op.device]];
  slot.start_ns = start;
  slot.end_ns = end;
  return true;
}

// The first device ends batch 0's steps no earlier than its free time plus the durations of its ops not
// yet timed and of its steps, and under a barrier no earlier than any device's free time plus its ops left
// plus the first device's steps: once one of those passes the period to beat, so does every steady period
// (RepeatedListRun::period_to_beat_ns), and batch 0 stops there.
void BatchTimer::start_period_bound() {
  if (run_.period_to_beat_ns == nullptr || !period_bound_applies_) return;
  beat_ns_ = run_.period_to_beat_ns->load(std::memory_order_relaxed);
  left_ns_.assign(devices_, 0);
  // Sums past TimeNs' range (absurd inputs) drop the bound; a negative step is refused below.
  bool in_range = true;
  for (int d = 0; d < devices_; ++d) {
    for (size_t i = device_begin_[d]; i < device_begin_[d + 1]; ++i)
      in_range &= !__builtin_add_overflow(left_ns_[d], duration_ns_[ops_[i].stage_kind], &left_ns_[d]);
  }
  for (int stage : step_stages_[first_device_]) {
    // What runs after the barrier (a lower bound on the device's end either way).
    const Action u = optimizer_step(stage, 0, run_.synchronized_steps);
    const TimeNs step_ns = costs_.duration(u) - (run_.synchronized_steps ? costs_.before_barrier_ns(u) : 0);
    in_range &=
        step_ns >= 0 && !__builtin_add_overflow(first_device_steps_ns_, step_ns, &first_device_steps_ns_);
  }
  if (!in_range) beat_ns_ = kNever;
}

// Batch 0: a worklist of devices, each running its list as far as its inputs are timed; a blocked device
// waits for one input and only that input's op wakes it. The order ops were timed in respects every
// dependency, and every batch has the same dependencies: later batches are timed in that order, no
// worklist.
FirstBatch BatchTimer::time_first_batch() {
  const bool any_device_bounds = run_.synchronized_steps;
  std::vector<int> work;
  std::vector<char> queued(devices_, 1);
  for (int d = devices_ - 1; d >= 0; --d) work.push_back(d);
  std::vector<size_t> cursor(device_begin_.begin(), device_begin_.end() - 1);
  std::vector<int> waiting_on(devices_, kNone);
  while (!work.empty()) {
    const int d = work.back();
    work.pop_back();
    queued[d] = 0;
    const size_t device_end = device_begin_[d + 1];
    size_t i = cursor[d];
    for (; i < device_end; ++i) {
      const BatchOp& op = ops_[i];
      if (end_ns_[op.own] == kUnknown) {  // an op later on this device: a deadlock
        waiting_on[d] = op.own;
        break;
      }
      if (end_ns_[op.input] == kUnknown) {
        waiting_on[d] = op.input;
        break;
      }
      if (!time_op(i, 0)) return FirstBatch::kRefused;
      order_.push_back(static_cast<int>(i));
      if (beat_ns_ != kNever && (d == first_device_ || any_device_bounds)) {
        left_ns_[d] -= duration_ns_[op.stage_kind];
        TimeNs bound_ns = 0;
        if (!__builtin_add_overflow(free_ns_[d], left_ns_[d], &bound_ns) &&
            !__builtin_add_overflow(bound_ns, first_device_steps_ns_, &bound_ns) && bound_ns > beat_ns_)
          return FirstBatch::kCannotBeat;
      }
      const int consumer = compiled_.consumer_device[op.stage_kind];
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
  return order_.size() + 1 == ops_.size() ? FirstBatch::kTimed : FirstBatch::kRefused;
}

// A later batch's ops, in batch 0's order.
inline bool BatchTimer::time_later_batch(int batch) {
  for (const int i : order_) {
    if (!time_op(static_cast<size_t>(i), batch)) return false;
  }
  return true;
}

// After each batch's ops, every device's optimizer steps, at the barrier where steps are synchronized:
// every device reaches it as its last op of the batch ends.
// Each device reaches it after its steps' work before the barrier (CostModel::before_barrier_ns), and
// each step runs the rest after it.
bool BatchTimer::time_steps(int batch) {
  TimeNs barrier_ns = 0;
  if (run_.synchronized_steps) {
    for (int d = 0; d < devices_; ++d) {
      const std::optional<TimeNs> before = before_barrier_total(costs_, layout_, d, batch);
      if (!before) return false;
      barrier_ns =
          std::max(barrier_ns, checked_sum_ns(free_ns_[d], *before, "a step's work before its barrier"));
    }
  }
  for (int d = 0; d < devices_; ++d) {
    size_t position = device_offset_[d] + batch * batch_length_[d] + device_ops(d);
    for (int stage : step_stages_[d]) {
      const TimeNs start = std::max(free_ns_[d], barrier_ns);
      const Action u = optimizer_step(stage, batch, run_.synchronized_steps);
      const TimeNs duration =
          costs_.duration(u) - (run_.synchronized_steps ? costs_.before_barrier_ns(u) : 0);
      if (duration < 0) return false;
      free_ns_[d] = checked_sum_ns(start, duration, "an op's end");
      op_times_[position++] = {start, free_ns_[d]};
    }
  }
  return true;
}

// Whether the first device's batch-0 step end already passes the period to beat.
bool BatchTimer::batch0_cannot_beat() const {
  if (run_.period_to_beat_ns == nullptr || !period_bound_applies_) return false;
  const int d = layout_.device(0);
  const TimeNs step_end_ns = op_times_[shift_[d] + device_begin_[d] + batch_length_[d] - 1].end_ns;
  return step_end_ns > run_.period_to_beat_ns->load(std::memory_order_relaxed);
}

void BatchTimer::record_first_stage_forward_starts(int batch, std::vector<TimeNs>& start_ns) const {
  for (const auto& [i, microbatch] : compiled_.first_stage_forwards) {
    const int d = ops_[i].device;
    start_ns[microbatch + batch * m_] = op_times_[i + shift_[d] + batch * batch_length_[d]].start_ns;
  }
}

// Whether every batch after `batch` is `batch` shifted (by shift_ns): every device ended `batch` (its last
// step) the same time after it ended the one before, and every later op lasts as long as its copy in
// `batch`. Sets shift_ns only where it is.
bool BatchTimer::repeats_after(int batch, TimeNs& shift_ns) const {
  const TimeNs shift_candidate_ns = step_end_ns(0, batch) - step_end_ns(0, batch - 1);
  TimeNs last_end_ns = 0;
  for (int d = 0; d < devices_; ++d) {
    if (step_end_ns(d, batch) - step_end_ns(d, batch - 1) != shift_candidate_ns) return false;
    last_end_ns = std::max(last_end_ns, step_end_ns(d, batch));
  }
  TimeNs shifted_ns = 0;  // the last batch's shift: no derived time may leave TimeNs' range
  if (shift_candidate_ns < 0 ||
      __builtin_mul_overflow(shift_candidate_ns, static_cast<TimeNs>(batches_ - 1 - batch), &shifted_ns) ||
      __builtin_add_overflow(last_end_ns, shifted_ns, &shifted_ns))
    return false;
  if (!later_batches_last_as_long(batch)) return false;
  shift_ns = shift_candidate_ns;
  return true;
}

// Whether every op and step of every batch after `batch` lasts as long as its copy in `batch` (always, with
// durations the same every batch).
bool BatchTimer::later_batches_last_as_long(int batch) const {
  for (int b = batch + 1; b < batches_ && !same_every_batch_; ++b) {
    const int offset = (b - batch) * m_;
    for (int d = 0; d < devices_; ++d) {
      for (Action a : run_.one_batch[d]) {
        a.microbatch += batch * m_;
        const TimeNs duration = costs_.duration(a);
        a.microbatch += offset;
        if (costs_.duration(a) != duration) return false;
      }
      for (int stage : step_stages_[d]) {
        const Action later = optimizer_step(stage, b, run_.synchronized_steps),
                     now = optimizer_step(stage, batch, run_.synchronized_steps);
        if (costs_.duration(later) != costs_.duration(now) ||
            costs_.before_barrier_ns(later) != costs_.before_barrier_ns(now))
          return false;
      }
    }
  }
  return true;
}

// The thread's buffers stay for its next call (a search times many candidates), unless a batch of over
// 2^18 ops made them large (7 MB and more): a long run's thread would otherwise hold them for good.
void release_large_buffers(CompiledBatch& compiled, std::vector<TimeNs>& end_ns, std::vector<int>& order) {
  if (compiled.ops.size() > (1u << 18)) {
    compiled = CompiledBatch{};
    std::vector<TimeNs>().swap(end_ns);
    std::vector<int>().swap(order);
  }
}

}  // namespace

std::optional<RepeatedListTimes> time_repeated_lists(const RepeatedListRun& run, const CostModel& costs) {
  const PipelineLayout& layout = run.layout;
  const int devices = layout.devices;
  const int m = run.microbatches_per_batch;
  const int batches = run.batches;
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
  thread_local std::vector<TimeNs> end_buffer;
  std::vector<TimeNs>& end_ns = end_buffer;
  thread_local std::vector<int> order_buffer;
  std::vector<int>& order = order_buffer;
  BatchTimer timer(run, costs, compiled, same_every_batch, end_ns, order);

  RepeatedListTimes times;
  times.m_ = m;
  times.batches_ = batches;
  if (!timer.lay_out(times.batch_ops_, times.steps_, times.device_offset_, times.ops_)) return std::nullopt;
  // Every entry is written before it is read: no value-initialisation of the largest array.
  times.op_times_.reset(new RepeatedListTimes::OpTime[times.ops_]);
  times.first_stage_forward_start_ns_.assign(m * batches, kNever);
  timer.set_output(times.op_times_.get(), times.device_offset_.data());
  timer.start_period_bound();

  // Batch by batch: once one batch ends every device's step exactly the same time after the previous
  // batch's did, every later batch repeats it shifted by that time (its timing is a max-plus function of
  // those ends alone), provided its ops last as long: those batches are not timed op by op.
  for (int batch = 0; batch < batches; ++batch) {
    if (batch == 0) {
      const FirstBatch outcome = timer.time_first_batch();
      if (outcome == FirstBatch::kRefused) return std::nullopt;
      if (outcome == FirstBatch::kCannotBeat) {
        times.cannot_beat_ = true;
        return times;
      }
    } else if (!timer.time_later_batch(batch)) {
      return std::nullopt;
    }
    if (!timer.time_steps(batch)) return std::nullopt;
    if (batch == 0 && timer.batch0_cannot_beat()) {
      times.cannot_beat_ = true;
      return times;
    }
    timer.record_first_stage_forward_starts(batch, times.first_stage_forward_start_ns_);
    times.explicit_batches_ = batch + 1;
    // From batch 0 on: under a barrier with equal steps every device ends batch 0 at the same time, as all
    // began it, so one batch times the run (the Zero Bubble search's barrier candidates).
    if (batch + 1 < batches && timer.repeats_after(batch, times.shift_ns_)) break;
  }
  for (int d = 0; d < devices; ++d) {
    const size_t length = times.device_ops(d);
    if (length > 0) times.makespan_ns_ = std::max(times.makespan_ns_, times.time_of(d, length - 1).end_ns);
  }
  release_large_buffers(compiled, end_ns, order);
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
