#include "sim/fast/static_list_timing.h"

#include <algorithm>
#include <numeric>
#include <queue>
#include <utility>

#include "base/value_ranges.h"
#include "sim/barrier_work.h"
#include "sim/op_rules.h"

namespace pipesim {
namespace {

constexpr TimeNs kNotYetTimed = -1;

struct Cell {
  TimeNs forward_end_ns = kNotYetTimed;
  TimeNs input_grad_end_ns = kNotYetTimed;  // B or I
  int forward_version = -1;
};

// The dependency-ordered pass over the devices' lists: a worklist of devices, each running its list as far as
// its inputs are timed.
class ListTimer {
 public:
  ListTimer(const StaticListRun& run, const CostModel& costs, RunTrace& trace)
      : run_(run),
        costs_(costs),
        layout_(run.layout),
        devices_(layout_.devices),
        stages_(layout_.stages),
        m_(run.total_microbatches),
        cells_(static_cast<size_t>(stages_) * m_),
        cursor_(devices_, 0),
        free_ns_(devices_, 0),
        stage_version_(stages_, 0),
        next_step_(devices_, 0),
        device_ops_(devices_),
        trace_(trace) {
    for (int d = 0; d < devices_; ++d) device_ops_[d].reserve(run.lists[d].size());
  }

  // False where the lists are refused: the caller runs the engine.
  bool time_all();
  // Each device's ops in list order, which is time order.
  const std::vector<std::vector<OpRecord>>& device_ops() const { return device_ops_; }

 private:
  Cell& cell(int stage, int mb) { return cells_[static_cast<size_t>(stage) * m_ + mb]; }
  TimeNs ready_ns(int d, const Action& a);
  bool arrive_at_barrier(int d, const Action& a);
  bool record_op(int d, const Action& a, TimeNs start);
  bool run_device(int d);
  void wake(int device) {
    if (!queued_[device]) {
      queued_[device] = 1;
      work_.push_back(device);
    }
  }

  const StaticListRun& run_;
  const CostModel& costs_;
  const PipelineLayout& layout_;
  const int devices_;
  const int stages_;
  const int m_;
  std::vector<Cell> cells_;
  std::vector<size_t> cursor_;
  std::vector<TimeNs> free_ns_;
  std::vector<int> stage_version_;
  // Barriers: per step, devices arrived and the latest arrival (the end of each device's op before it).
  std::vector<int> arrived_;
  std::vector<TimeNs> barrier_ns_;
  std::vector<int> next_step_;
  std::vector<std::vector<OpRecord>> device_ops_;  // each in list order, which is time order
  RunTrace& trace_;
  std::vector<int> work_;
  std::vector<char> queued_;
};

// The time `a` may start on device d, or kNotYetTimed while one of its inputs is not yet timed.
inline TimeNs ListTimer::ready_ns(int d, const Action& a) {
  if (a.kind == OpKind::U) {
    if (!a.synchronized) return free_ns_[d];
    const auto step = static_cast<size_t>(a.microbatch);
    if (step >= arrived_.size() || arrived_[step] < devices_) return kNotYetTimed;
    return std::max(free_ns_[d], barrier_ns_[step]);
  }
  const Cell& own = cell(a.stage, a.microbatch);
  TimeNs t = free_ns_[d];
  const auto after = [&](TimeNs end_ns, int producer_stage) {
    if (end_ns == kNotYetTimed) return false;
    const int from = layout_.device(producer_stage);
    t = std::max(t, from == d ? end_ns : add_time_ns(end_ns, run_.latency_ns[from], "a transfer's arrival"));
    return true;
  };
  // The rule table's dependencies (sim/op_rules.h): its own (stage, microbatch)'s earlier ops, then the
  // transfer it waits for.
  const OpRule rule = rule_of(a.kind);
  if ((rule.needs_done & kForwardDone) && !after(own.forward_end_ns, a.stage)) return kNotYetTimed;
  if ((rule.needs_done & kInputGradDone) && !after(own.input_grad_end_ns, a.stage)) return kNotYetTimed;
  if (rule.input_from == Neighbour::kPrevious && a.stage > 0 &&
      !after(cell(a.stage - 1, a.microbatch).forward_end_ns, a.stage - 1))
    return kNotYetTimed;
  if (rule.input_from == Neighbour::kNext && a.stage + 1 < stages_ &&
      !after(cell(a.stage + 1, a.microbatch).input_grad_end_ns, a.stage + 1))
    return kNotYetTimed;
  return t;
}

// The device reaches the barrier as it asks for its first U of the step: when its last op ended. False where
// the engine must name the error.
inline bool ListTimer::arrive_at_barrier(int d, const Action& a) {
  const auto step = static_cast<size_t>(a.microbatch);
  if (step >= arrived_.size()) {
    arrived_.resize(step + 1, 0);
    barrier_ns_.resize(step + 1, 0);
  }
  // It arrives after its steps' work before the barrier (CostModel::before_barrier_ns).
  const std::optional<TimeNs> before = before_barrier_total(costs_, layout_, d, a.microbatch);
  if (!before) return false;  // the engine names it
  const TimeNs arrival = add_time_ns(free_ns_[d], *before, "a step's work before its barrier");
  if (arrival > free_ns_[d]) {
    auto& steps = trace_.before_barrier_ns;
    if (steps.empty()) steps.resize(devices_);
    if (steps[d].size() <= step) steps[d].resize(step + 1, 0);
    steps[d][step] = arrival - free_ns_[d];
  }
  barrier_ns_[step] = std::max(barrier_ns_[step], arrival);
  next_step_[d] = a.microbatch + 1;
  if (++arrived_[step] == devices_) {
    for (int other = 0; other < devices_; ++other) wake(other);
  }
  return true;
}

// Times `a` on device d from `start`, records it and wakes its output's consumer; false where refused.
inline bool ListTimer::record_op(int d, const Action& a, TimeNs start) {
  TimeNs duration = costs_.duration(a);
  if (a.kind == OpKind::U && a.synchronized) duration -= costs_.before_barrier_ns(a);  // ran before it
  // An op with memory effects that starts and ends at one instant: the order of its changes against
  // the device's others then depends on the engine's event order. A step has none.
  if (duration < 0 || (duration == 0 && a.kind != OpKind::U)) return false;
  const TimeNs end = add_time_ns(start, duration, "an op's end");
  int version = stage_version_[a.stage];
  if (a.kind == OpKind::U) {
    ++stage_version_[a.stage];  // the stage's next op on this device starts after this one ends
  } else {
    const OpRule rule = rule_of(a.kind);
    Cell& own = cell(a.stage, a.microbatch);
    if (rule.sets_done & kForwardDone) {
      if (own.forward_end_ns != kNotYetTimed) return false;
      own.forward_end_ns = end;
      own.forward_version = version;
    }
    if (rule.sets_done & kInputGradDone) {
      if (own.input_grad_end_ns != kNotYetTimed) return false;
      own.input_grad_end_ns = end;
    }
    if (rule.reads_stashed_version && run_.backward_reads == BackwardReads::kStashedWeights)
      version = own.forward_version;
  }
  device_ops_[d].push_back({a, d, version, start, end});
  free_ns_[d] = end;
  ++cursor_[d];
  // Its output's consumer may now run.
  const Neighbour output = rule_of(a.kind).output_to;
  if (output == Neighbour::kNext && a.stage + 1 < stages_) wake(layout_.device(a.stage + 1));
  if (output == Neighbour::kPrevious && a.stage > 0) wake(layout_.device(a.stage - 1));
  return true;
}

// Runs device d's list as far as its inputs are timed; false where refused.
inline bool ListTimer::run_device(int d) {
  const auto& list = run_.lists[d];
  while (cursor_[d] < list.size()) {
    const Action& a = list[cursor_[d]];
    if (a.stage < 0 || a.stage >= stages_ || layout_.device(a.stage) != d) return false;
    if (a.fused_with_next) return false;  // a fused pair starts when both are ready: the engine
    if (a.kind != OpKind::U && (a.microbatch < 0 || a.microbatch >= m_)) return false;
    if (a.kind == OpKind::U && a.synchronized && a.microbatch >= next_step_[d] && !arrive_at_barrier(d, a))
      return false;
    const TimeNs start = ready_ns(d, a);
    if (start == kNotYetTimed) break;
    if (!record_op(d, a, start)) return false;
  }
  return true;
}

// Timing an op wakes the device that consumes its output, completing a barrier wakes every device.
bool ListTimer::time_all() {
  work_.resize(devices_);
  std::iota(work_.begin(), work_.end(), 0);
  queued_.assign(devices_, 1);
  while (!work_.empty()) {
    const int d = work_.back();
    work_.pop_back();
    queued_[d] = 0;
    if (!run_device(d)) return false;
  }
  for (int d = 0; d < devices_; ++d) {
    if (cursor_[d] != run_.lists[d].size()) return false;  // a deadlock: the engine names it
  }
  return true;
}

// Activation and in-flight peaks: a device's ops never overlap, so its changes in list order are in time
// order, an end before a start at the same instant as the engine processes them.
void record_memory_peaks(const std::vector<std::vector<OpRecord>>& device_ops, const CostModel& costs,
                         RunTrace& trace) {
  const int devices = static_cast<int>(device_ops.size());
  trace.memory.resize(devices);
  trace.peak_activation_bytes.assign(devices, 0);
  trace.peak_in_flight.assign(devices, 0);
  for (int d = 0; d < devices; ++d) {
    Bytes bytes = 0;
    int in_flight = 0;
    const auto change = [&](Bytes delta_bytes, int delta_in_flight) {
      bytes += delta_bytes;
      in_flight += delta_in_flight;
      trace.peak_activation_bytes[d] = std::max(trace.peak_activation_bytes[d], bytes);
      trace.peak_in_flight[d] = std::max(trace.peak_in_flight[d], in_flight);
    };
    for (const OpRecord& op : device_ops[d]) {
      const int stage = op.action.stage;
      // The rule table's memory effects, as the engine applies them.
      const OpRule rule = rule_of(op.action.kind);
      Bytes delta = 0;
      int in_flight_delta = 0;
      if (rule.holds_activations) {
        delta += costs.activation_bytes(stage);
        ++in_flight_delta;
      }
      if (rule.frees_activations) {
        delta -= costs.activation_bytes(stage);
        --in_flight_delta;
      }
      delta += rule.weight_grad_bytes_sign * costs.weight_grad_activation_bytes(stage);
      if (op.action.kind != OpKind::U) change(delta, in_flight_delta);
    }
    if (!device_ops[d].empty()) trace.makespan_ns = std::max(trace.makespan_ns, device_ops[d].back().end_ns);
  }
}

// All ops by start time, then device, then list order: a merge of the devices' sorted lists. Within one
// instant the engine may order devices otherwise (a barrier releases them in passes).
void merge_by_start(const std::vector<std::vector<OpRecord>>& device_ops, size_t total_ops, RunTrace& trace) {
  const int devices = static_cast<int>(device_ops.size());
  trace.ops.reserve(total_ops);
  using Head = std::pair<TimeNs, int>;  // next op's start, device
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  std::vector<size_t> taken(devices, 0);
  for (int d = 0; d < devices; ++d) {
    if (!device_ops[d].empty()) heads.push({device_ops[d][0].start_ns, d});
  }
  while (!heads.empty()) {
    const int d = heads.top().second;
    heads.pop();
    trace.ops.push_back(device_ops[d][taken[d]++]);
    if (taken[d] < device_ops[d].size()) heads.push({device_ops[d][taken[d]].start_ns, d});
  }
}

}  // namespace

std::optional<RunTrace> time_static_lists(const StaticListRun& run, const CostModel& costs) {
  const PipelineLayout& layout = run.layout;
  const int devices = layout.devices;
  // Two pipelines side by side (DualPipe, Chimera) route each microbatch through half the stages: the engine.
  if (static_cast<int>(run.lists.size()) != devices || static_cast<int>(run.latency_ns.size()) != devices ||
      layout.pipelines != 1)
    return std::nullopt;
  RunTrace trace;
  trace.layout = layout;
  trace.total_microbatches = run.total_microbatches;
  size_t total_ops = 0;
  for (const auto& list : run.lists) total_ops += list.size();
  ListTimer timer(run, costs, trace);
  if (!timer.time_all()) return std::nullopt;
  record_memory_peaks(timer.device_ops(), costs, trace);
  merge_by_start(timer.device_ops(), total_ops, trace);
  return trace;
}

}  // namespace pipesim
