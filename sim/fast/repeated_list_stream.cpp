#include "sim/fast/repeated_list_stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "base/errors.h"
#include "base/value_ranges.h"
#include "sim/engine/event_queue.h"
#include "sim/fast/repeated_list_timing.h"
#include "sim/op_rules.h"

namespace pipesim {
namespace {

// Up to 2^17 ops a batch (N = 32 and m = 1,365 for 1F1B with I and W), so that the pass never holds more
// than about 7.5 MB beyond the engine's own state.
constexpr size_t kMaxBatchOps = size_t{1} << 17;

// What the engine keeps of a streamed run besides the observer's events: its summary trace's figures.
class Replay {
 public:
  Replay(const ExecutionPlan& plan, const CostModel& costs, const std::vector<TimeNs>& latency_ns,
         RunObserver& observer)
      : layout_(plan.layout),
        latency_ns_(latency_ns),
        observer_(observer),
        activation_bytes_(layout_.devices, 0),
        in_flight_(layout_.devices, 0),
        stage_in_flight_(layout_.stages, 0),
        stages_done_(plan.total_microbatches, 0) {
    for (int stage = 0; stage < layout_.stages; ++stage) {
      stage_activation_bytes_.push_back(costs.activation_bytes(stage));
      stage_weight_grad_bytes_.push_back(costs.weight_grad_activation_bytes(stage));
      stage_transfer_bytes_.push_back(costs.transfer_bytes(stage));
    }
    summary_.layout = layout_;
    summary_.total_microbatches = plan.total_microbatches;
    summary_.peak_activation_bytes.assign(layout_.devices, 0);
    summary_.peak_in_flight.assign(layout_.devices, 0);
    summary_.stage_peak_in_flight.assign(layout_.stages, 0);
    for (int d = 0; d < layout_.devices; ++d) observer_.memory_changed(d, {0, 0, 0});
  }

  // An op of batch `batch` starts (every op of a batch reads the weights of its batch: its stage's steps
  // of the earlier batches have ended before it on the same device).
  void start(int d, const Action& a, int batch, TimeNs start_ns, TimeNs end_ns) {
    ++summary_.op_count;
    summary_.critical_path_ns = std::max(summary_.critical_path_ns, end_ns);
    if (a.kind == OpKind::U) {
      // The step replaces the version it read; nothing reads that one after the step (its stage's ops all
      // ran before it on this device), so it dies as the step ends.
      observer_.version_retired(a.stage, batch, end_ns);
    } else {
      enter_microbatch(a.microbatch);
    }
    const OpRule rule = rule_of(a.kind);  // sim/op_rules.h, as the engine applies it
    if (rule.holds_activations) {
      ++in_flight_[d];
      int& stage_in_flight = stage_in_flight_[a.stage];
      ++stage_in_flight;
      summary_.stage_peak_in_flight[a.stage] =
          std::max(summary_.stage_peak_in_flight[a.stage], stage_in_flight);
      change_memory(d, stage_activation_bytes_[a.stage], start_ns);
    }
    if (rule.sets_done & kWeightGradDone) {  // the last gradient op of its (stage, microbatch)
      observer_.gradient_complete({a.stage, a.microbatch, batch, batch, end_ns});
    }
    observer_.op_started({a, d, batch, start_ns, end_ns});
  }

  void end(int d, const Action& a, TimeNs end_ns) {
    if (a.kind == OpKind::U) return;
    const OpRule rule = rule_of(a.kind);
    if (rule.frees_activations) {
      --in_flight_[d];
      --stage_in_flight_[a.stage];
    }
    const Bytes delta = (rule.frees_activations ? -stage_activation_bytes_[a.stage] : 0) +
                        rule.weight_grad_bytes_sign * stage_weight_grad_bytes_[a.stage];
    if (!rule.holds_activations) change_memory(d, delta, end_ns);  // F's bytes came at its start
    if (rule.output_to == Neighbour::kNext && !layout_.is_last_stage(a.stage)) send(a, a.stage + 1, end_ns);
    if (rule.output_to == Neighbour::kPrevious && !layout_.is_first_stage(a.stage))
      send(a, a.stage - 1, end_ns);
    if (rule.sets_done & kWeightGradDone) finish_stage(a.microbatch);
  }

  RunTrace finish(TimeNs makespan_ns) {
    summary_.makespan_ns = makespan_ns;
    observer_.run_finished(makespan_ns);
    return std::move(summary_);
  }

 private:
  void change_memory(int d, Bytes delta, TimeNs now_ns) {
    Bytes& bytes = activation_bytes_[d];
    if (__builtin_add_overflow(bytes, delta, &bytes)) {
      throw InputError(fmt::format(
          "device {}'s activation memory passes 2^63 bytes; lower the activation bytes or the microbatches "
          "in flight",
          d + 1));
    }
    observer_.memory_changed(d, {now_ns, bytes, in_flight_[d]});
    summary_.peak_activation_bytes[d] = std::max(summary_.peak_activation_bytes[d], bytes);
    summary_.peak_in_flight[d] = std::max(summary_.peak_in_flight[d], in_flight_[d]);
  }

  void send(const Action& a, int dst_stage, TimeNs now_ns) {
    const int src = layout_.device(a.stage);
    const int dst = layout_.device(dst_stage);
    if (src == dst) return;  // a local hand-over: no transfer
    const TimeNs arrival_ns = add_time_ns(now_ns, latency_ns_[src], "a transfer's arrival");
    observer_.transfer_sent({a.kind, a.stage, dst_stage, a.microbatch, src, dst,
                             stage_transfer_bytes_[std::min(a.stage, dst_stage)], now_ns, now_ns, arrival_ns,
                             false});
  }

  // The engine holds per-(stage, microbatch) state from a microbatch's first op until every stage has run
  // its last op for it, and for every microbatch below it (sim/engine/microbatch_window.h).
  void enter_microbatch(int microbatch) {
    if (microbatch < held_end_) return;
    held_end_ = microbatch + 1;
    summary_.microbatches_held_max = std::max(summary_.microbatches_held_max, held_end_ - held_first_);
  }
  void finish_stage(int microbatch) {
    ++stages_done_[microbatch];
    while (held_first_ < held_end_ && stages_done_[held_first_] == layout_.stages) ++held_first_;
  }

  const PipelineLayout& layout_;
  const std::vector<TimeNs>& latency_ns_;
  RunObserver& observer_;
  std::vector<Bytes> stage_activation_bytes_;   // M_B per stage
  std::vector<Bytes> stage_weight_grad_bytes_;  // M_W per stage
  std::vector<Bytes> stage_transfer_bytes_;     // sent both ways across the boundary after each stage
  std::vector<Bytes> activation_bytes_;         // per device
  std::vector<int> in_flight_;                  // per device
  std::vector<int> stage_in_flight_;
  std::vector<int> stages_done_;  // per microbatch: stages that ran their last op for it
  int held_first_ = 0;            // the lowest microbatch some stage has not finished
  int held_end_ = 0;              // one past the highest microbatch begun
  RunTrace summary_;
};

}  // namespace

std::optional<RunTrace> stream_repeated_lists(const ExecutionPlan& plan, const CostModel& costs,
                                              const CommModel& comm, RunObserver& observer) {
  const RepeatedBatchLists* lists = plan.repeated.get();
  const auto* fixed = dynamic_cast<const FixedLatencyComm*>(&comm);
  const PipelineLayout& layout = plan.layout;
  if (lists == nullptr || fixed == nullptr || comm.blocks_streams() || layout.pipelines != 1 ||
      plan.backward_reads != BackwardReads::kCurrentWeights || plan.forward_reads.period_microbatches != 0 ||
      plan.total_microbatches != lists->batches * lists->microbatches_per_batch ||
      static_cast<int>(fixed->latency_ns().size()) != layout.devices)
    return std::nullopt;
  // The pass holds about 57 bytes per op of a batch (its lists laid out, its compiled batch and the op times
  // of the batches it times one by one; about 7.5 MB at kMaxBatchOps) where the engine holds the microbatches
  // in flight and runs from the lists' runs: beyond kMaxBatchOps, the engine's memory is the better trade.
  size_t batch_ops = 0;
  for (const ActionRuns& list : lists->one_batch) batch_ops += list.size();
  if (batch_ops > kMaxBatchOps) return std::nullopt;
  // The pass reads its lists by index: laid out in full while it runs.
  std::vector<std::vector<Action>> one_batch;
  one_batch.reserve(lists->one_batch.size());
  for (const ActionRuns& list : lists->one_batch) one_batch.push_back(list.expand());
  const int m = lists->microbatches_per_batch;
  const std::optional<RepeatedListTimes> times = time_repeated_lists(
      {layout, one_batch, m, lists->batches, lists->synchronized_steps, fixed->latency_ns()}, costs);
  if (!times) return std::nullopt;

  // Each device's run order: batch b's list (microbatches offset by b * m), then its steps of batch b.
  struct Cursor {
    int batch = 0;
    size_t index = 0;  // within the batch: its list, then its steps
    std::vector<int> step_stages;
    Action running;  // the op started last, kept for its end
  };
  std::vector<Cursor> cursors(layout.devices);
  for (int d = 0; d < layout.devices; ++d) cursors[d].step_stages = layout.stages_on(d);
  const auto action_of = [&](int d, const Cursor& c) {
    const std::vector<Action>& list = one_batch[d];
    if (c.index >= list.size())
      return optimizer_step(c.step_stages[c.index - list.size()], c.batch, lists->synchronized_steps);
    Action a = list[c.index];
    a.microbatch += c.batch * m;
    return a;
  };

  // Each device's next report, the end of its running op or the start of its next, in a queue by time
  // (sim/engine/event_queue.h); within an instant every end comes before every start, as the engine ends ops
  // before it asks devices again (the sequence number orders an instant's events: 0 for ends, 1 starts).
  Replay replay(plan, costs, fixed->latency_ns(), observer);
  EventQueue queue;
  const auto report_start = [&](int d, TimeNs time_ns) { queue.push(Event(time_ns, 1, d, false)); };
  for (int d = 0; d < layout.devices; ++d) {
    if (lists->batches > 0 && one_batch[d].size() + cursors[d].step_stages.size() > 0)
      report_start(d, times->time_in_batch(d, 0, 0).start_ns);
  }
  std::vector<Event> instant;
  while (!queue.empty()) {
    const TimeNs now_ns = queue.pop_earliest(instant);
    for (const Event& event : instant) {
      const int d = event.device();
      Cursor& c = cursors[d];
      if (!event.op_end()) {
        c.running = action_of(d, c);
        const TimeNs end_ns = times->time_in_batch(d, c.batch, c.index).end_ns;
        replay.start(d, c.running, c.batch, now_ns, end_ns);
        queue.push(Event(end_ns, 0, d, true));
        continue;
      }
      replay.end(d, c.running, now_ns);
      if (++c.index == one_batch[d].size() + c.step_stages.size()) {
        c.index = 0;
        if (++c.batch == lists->batches) continue;
      }
      report_start(d, times->time_in_batch(d, c.batch, c.index).start_ns);
    }
  }
  return replay.finish(times->makespan_ns());
}

}  // namespace pipesim
