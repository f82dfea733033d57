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

}  // namespace

std::optional<RunTrace> time_static_lists(const StaticListRun& run, const CostModel& costs) {
  const PipelineLayout& layout = run.layout;
  const int devices = layout.devices;
  const int stages = layout.stages;
  const int m = run.total_microbatches;
  // Two pipelines side by side (DualPipe, Chimera) route each microbatch through half the stages: the engine.
  if (static_cast<int>(run.lists.size()) != devices || static_cast<int>(run.latency_ns.size()) != devices ||
      layout.pipelines != 1)
    return std::nullopt;
  std::vector<Cell> cells(static_cast<size_t>(stages) * m);
  const auto cell = [&](int stage, int mb) -> Cell& { return cells[static_cast<size_t>(stage) * m + mb]; };
  std::vector<size_t> cursor(devices, 0);
  std::vector<TimeNs> free_ns(devices, 0);
  std::vector<int> stage_version(stages, 0);
  // Barriers: per step, devices arrived and the latest arrival (the end of each device's op before it).
  std::vector<int> arrived;
  std::vector<TimeNs> barrier_ns;
  std::vector<int> next_step(devices, 0);
  RunTrace trace;
  trace.layout = layout;
  trace.total_microbatches = m;
  size_t total_ops = 0;
  for (const auto& list : run.lists) total_ops += list.size();
  std::vector<std::vector<OpRecord>> device_ops(devices);  // each in list order, which is time order
  for (int d = 0; d < devices; ++d) device_ops[d].reserve(run.lists[d].size());

  // The time `a` may start on device d, or kNotYetTimed while one of its inputs is not yet timed.
  const auto ready_ns = [&](int d, const Action& a) -> TimeNs {
    if (a.kind == OpKind::U) {
      if (!a.synchronized) return free_ns[d];
      const auto step = static_cast<size_t>(a.microbatch);
      if (step >= arrived.size() || arrived[step] < devices) return kNotYetTimed;
      return std::max(free_ns[d], barrier_ns[step]);
    }
    const Cell& own = cell(a.stage, a.microbatch);
    TimeNs t = free_ns[d];
    const auto after = [&](TimeNs end_ns, int producer_stage) {
      if (end_ns == kNotYetTimed) return false;
      const int from = layout.device(producer_stage);
      t = std::max(t, from == d ? end_ns : add_time_ns(end_ns, run.latency_ns[from], "a transfer's arrival"));
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
    if (rule.input_from == Neighbour::kNext && a.stage + 1 < stages &&
        !after(cell(a.stage + 1, a.microbatch).input_grad_end_ns, a.stage + 1))
      return kNotYetTimed;
    return t;
  };

  // A worklist of devices: each runs its list as far as its inputs are timed; timing an op wakes the device
  // that consumes its output, completing a barrier wakes every device.
  std::vector<int> work(devices);
  std::iota(work.begin(), work.end(), 0);
  std::vector<char> queued(devices, 1);
  const auto wake = [&](int device) {
    if (!queued[device]) {
      queued[device] = 1;
      work.push_back(device);
    }
  };
  while (!work.empty()) {
    const int d = work.back();
    work.pop_back();
    queued[d] = 0;
    {
      const auto& list = run.lists[d];
      while (cursor[d] < list.size()) {
        const Action& a = list[cursor[d]];
        if (a.stage < 0 || a.stage >= stages || layout.device(a.stage) != d) return std::nullopt;
        if (a.fused_with_next) return std::nullopt;  // a fused pair starts when both are ready: the engine
        if (a.kind != OpKind::U && (a.microbatch < 0 || a.microbatch >= m)) return std::nullopt;
        if (a.kind == OpKind::U && a.synchronized && a.microbatch >= next_step[d]) {
          // The device reaches the barrier as it asks for its first U of the step: when its last op ended.
          const auto step = static_cast<size_t>(a.microbatch);
          if (step >= arrived.size()) {
            arrived.resize(step + 1, 0);
            barrier_ns.resize(step + 1, 0);
          }
          // It arrives after its steps' work before the barrier (CostModel::before_barrier_ns).
          const std::optional<TimeNs> before = before_barrier_total(costs, layout, d, a.microbatch);
          if (!before) return std::nullopt;  // the engine names it
          const TimeNs arrival = add_time_ns(free_ns[d], *before, "a step's work before its barrier");
          if (arrival > free_ns[d]) {
            auto& steps = trace.before_barrier_ns;
            if (steps.empty()) steps.resize(devices);
            if (steps[d].size() <= step) steps[d].resize(step + 1, 0);
            steps[d][step] = arrival - free_ns[d];
          }
          barrier_ns[step] = std::max(barrier_ns[step], arrival);
          next_step[d] = a.microbatch + 1;
          if (++arrived[step] == devices) {
            for (int other = 0; other < devices; ++other) wake(other);
          }
        }
        const TimeNs start = ready_ns(d, a);
        if (start == kNotYetTimed) break;
        TimeNs duration = costs.duration(a);
        if (a.kind == OpKind::U && a.synchronized) duration -= costs.before_barrier_ns(a);  // ran before it
        // An op with memory effects that starts and ends at one instant: the order of its changes against
        // the device's others then depends on the engine's event order. A step has none.
        if (duration < 0 || (duration == 0 && a.kind != OpKind::U)) return std::nullopt;
        const TimeNs end = add_time_ns(start, duration, "an op's end");
        int version = stage_version[a.stage];
        if (a.kind == OpKind::U) {
          ++stage_version[a.stage];  // the stage's next op on this device starts after this one ends
        } else {
          const OpRule rule = rule_of(a.kind);
          Cell& own = cell(a.stage, a.microbatch);
          if (rule.sets_done & kForwardDone) {
            if (own.forward_end_ns != kNotYetTimed) return std::nullopt;
            own.forward_end_ns = end;
            own.forward_version = version;
          }
          if (rule.sets_done & kInputGradDone) {
            if (own.input_grad_end_ns != kNotYetTimed) return std::nullopt;
            own.input_grad_end_ns = end;
          }
          if (rule.reads_stashed_version && run.backward_reads == BackwardReads::kStashedWeights)
            version = own.forward_version;
        }
        device_ops[d].push_back({a, d, version, start, end});
        free_ns[d] = end;
        ++cursor[d];
        // Its output's consumer may now run.
        const Neighbour output = rule_of(a.kind).output_to;
        if (output == Neighbour::kNext && a.stage + 1 < stages) wake(layout.device(a.stage + 1));
        if (output == Neighbour::kPrevious && a.stage > 0) wake(layout.device(a.stage - 1));
      }
    }
  }
  for (int d = 0; d < devices; ++d) {
    if (cursor[d] != run.lists[d].size()) return std::nullopt;  // a deadlock: the engine names it
  }
  // Activation and in-flight peaks: a device's ops never overlap, so its changes in list order are in time
  // order, an end before a start at the same instant as the engine processes them.
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
  // All ops by start time, then device, then list order: a merge of the devices' sorted lists. Within one
  // instant the engine may order devices otherwise (a barrier releases them in passes).
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
  return trace;
}

}  // namespace pipesim
