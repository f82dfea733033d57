#include "sim/engine/engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <deque>
#include <optional>
#include <queue>
#include <utility>

#include "base/errors.h"
#include "base/value_ranges.h"
#include "sim/barrier_work.h"
#include "sim/engine/event_queue.h"
#include "sim/engine/microbatch_window.h"
#include "sim/op_rules.h"
#include "sim/run_observer.h"

namespace pipesim {
namespace {

// Where the critical path stands at one op: its earliest finish over the task graph, its real end, and its
// index in the trace (kept only when the trace is recorded, to name the path's ops).
struct DagPoint {
  TimeNs finish_ns = 0;
  TimeNs end_ns = 0;
  std::int32_t op = -1;
  bool known = false;
};

struct MicrobatchState {
  TimeNs activation_arrival_ns = kNever;  // input activation from the previous stage is usable from then
  TimeNs gradient_arrival_ns = kNever;    // output gradient from the next stage is usable from then
  // The F and the B or I of this (stage, microbatch): the producers whose ends the critical path follows.
  DagPoint forward;
  DagPoint input_grad;
  std::int32_t forward_version = -1;
  std::int32_t gradient_version = -1;  // largest version its gradient ops read so far
  std::uint8_t done = 0;
};

// One weight version of one stage while it may still be read. It is retired (RunObserver::version_retired)
// once replaced and no longer referenced: by a stash (a microbatch whose forward read it and whose last
// gradient op has not started) or by a forward pinned to it that has not started (double buffering).
struct VersionLife {
  int references = 0;
  TimeNs last_read_end_ns = 0;
  TimeNs replaced_end_ns = kNever;  // end of the U that replaced it; kNever while current
};

struct DeviceState {
  bool busy = false;
  bool finished = false;
  bool dirty = true;
  Action running{};
  TimeNs running_end_ns = 0;
  TimeNs stream_held_until_ns = 0;  // blocking transfers hold the stream until then
  std::optional<Action> blocked_on;
  int barrier_next_step = 0;  // lowest optimizer step this device has not yet arrived at
  // The step whose work before the barrier (CostModel::before_barrier_ns) this device has run or is running,
  // and how long that work took.
  int before_barrier_step = -1;
  TimeNs before_barrier_ns = 0;
  Bytes activation_bytes = 0;
  int in_flight = 0;
  DagPoint last_op;                        // the op this device started last
  std::vector<DagPoint> arrivals;          // under copies of the model: its last op before each step
  std::optional<TimeNs> fused_partner_ns;  // a fused F runs: its partner's share of the slot, next
};

// Device indices to ask, taken lowest first; a bitset, since every pass walks up the devices.
class DeviceSet {
 public:
  void resize(int devices) { words_.assign((devices + 63) / 64, 0); }
  bool empty() const { return count_ == 0; }
  void insert(int d) {
    std::uint64_t& word = words_[d / 64];
    const std::uint64_t bit = std::uint64_t{1} << (d % 64);
    if (word & bit) return;
    word |= bit;
    ++count_;
    if (d / 64 < lowest_word_) lowest_word_ = d / 64;
  }
  int pop_lowest() {
    while (words_[lowest_word_] == 0) ++lowest_word_;
    std::uint64_t& word = words_[lowest_word_];
    const int d = lowest_word_ * 64 + std::countr_zero(word);
    word &= word - 1;
    --count_;
    return d;
  }
  void swap(DeviceSet& other) {
    words_.swap(other.words_);
    std::swap(count_, other.count_);
    std::swap(lowest_word_, other.lowest_word_);
  }

 private:
  std::vector<std::uint64_t> words_;
  int count_ = 0;
  int lowest_word_ = 0;  // no set bit below this word
};

class Engine final : public LocalView {
 public:
  Engine(ExecutionPlan& plan, const CostModel& costs, CommModel& comm, RunObserver* observer)
      : plan_(plan),
        layout_(plan.layout),
        costs_(costs),
        comm_(comm),
        mb_state_(plan.layout.stages, plan.layout.stages_per_pipeline(), finished_microbatch()),
        observer_(observer),
        record_(!observer) {
    if (layout_.devices >= Event::kMaxDevices) {
      throw InputError(
          fmt::format("{} devices: the engine handles fewer than {}", layout_.devices, Event::kMaxDevices));
    }
    if (static_cast<int>(plan.policies.size()) != layout_.devices) {
      throw ScheduleError(
          fmt::format("plan has {} device policies for {} devices", plan.policies.size(), layout_.devices));
    }
    microbatches_ = plan.total_microbatches;
    devices_.resize(layout_.devices);
    this_pass_.resize(layout_.devices);
    next_pass_.resize(layout_.devices);
    for (int d = 0; d < layout_.devices; ++d) this_pass_.insert(d);  // every device is asked at time 0
    if (record_) {
      // Most schedules run F, B (or I and W) once per stage and microbatch, plus a few U.
      trace_.ops.reserve(static_cast<size_t>(layout_.stages) * microbatches_ * 3 + 64);
      dag_parent_.reserve(trace_.ops.capacity());
      trace_.transfers.reserve(static_cast<size_t>(layout_.stages) * microbatches_ * 2 + 64);
      trace_.memory.resize(layout_.devices);
      for (auto& samples : trace_.memory) samples.push_back({0, 0, 0});
    } else {
      for (int d = 0; d < layout_.devices; ++d) observer_->memory_changed(d, {0, 0, 0});
    }
    stage_version_.assign(layout_.stages, 0);
    stage_in_flight_.assign(layout_.stages, 0);
    versions_.resize(layout_.stages);
    version_base_.assign(layout_.stages, 0);
    for (int stage = 0; stage < layout_.stages; ++stage) make_version(stage, 0);
    trace_.layout = layout_;
    if (comm_.blocks_streams() && !plan.transfer_gates.empty()) {
      gates_ = TransferGateIndex(plan.transfer_gates, plan.transfer_gate_period);
    }
    trace_.total_microbatches = microbatches_;
    trace_.peak_activation_bytes.assign(layout_.devices, 0);
    trace_.peak_in_flight.assign(layout_.devices, 0);
    trace_.stage_peak_in_flight.assign(layout_.stages, 0);
  }

  RunTrace run() {
    dispatch_dirty_devices();
    while (!events_.empty()) {
      now_ = events_.pop_earliest(instant_events_);
      for (const Event& event : instant_events_) {
        if (event.op_end()) {
          finish_op(event.device());
        } else {
          mark_dirty(event.device());
        }
      }
      dispatch_dirty_devices();
    }
    check_all_finished();
    check_versions_retired();
    trace_.microbatches_held_max = mb_state_.live_max();
    trace_.makespan_ns = now_;
    record_critical_path();
    if (observer_) observer_->run_finished(now_);
    return std::move(trace_);
  }

  // LocalView
  bool is_ready(const Action& a) const override {
    if (a.kind == OpKind::U) {
      if (a.synchronized) return barrier_complete(a.microbatch);
      return layout_.pipelines == 1 || copies_arrived(a.stage, a.microbatch);
    }
    const MicrobatchState& st = state(a.stage, a.microbatch);
    const OpRule rule = rule_of(a.kind);
    return (st.done & rule.needs_done) == rule.needs_done && input_arrived(a, rule.input_from) &&
           (!rule.pins_forward_version || has_forward_version(a));
  }
  int weight_version(int stage) const override { return stage_version_[stage]; }
  int in_flight(int stage) const override { return stage_in_flight_[stage]; }

 private:
  static MicrobatchState finished_microbatch() {
    MicrobatchState st;
    st.activation_arrival_ns = st.gradient_arrival_ns = 0;
    st.done = kAllDone;
    return st;
  }
  MicrobatchState& state(int stage, int mb) {
    if (mb_state_.released(mb)) [[unlikely]] {
      throw_released(stage, mb);
    }
    return mb_state_.at(stage, mb);
  }
  // Kept out of state(), which every op calls several times, so that it inlines.
  [[noreturn, gnu::cold, gnu::noinline]] static void throw_released(int stage, int mb) {
    throw ScheduleError(fmt::format("engine: stage {} mb {} changed after its last op", stage + 1, mb));
  }
  const MicrobatchState& state(int stage, int mb) const { return mb_state_.get(stage, mb); }

  // Whether the transfer the op waits for has arrived; none is needed at the pipeline's ends.
  bool input_arrived(const Action& a, Neighbour from) const {
    const MicrobatchState& st = state(a.stage, a.microbatch);
    switch (from) {
      case Neighbour::kPrevious:
        return layout_.is_first_stage(a.stage) || st.activation_arrival_ns <= now_;
      case Neighbour::kNext:
        return layout_.is_last_stage(a.stage) || st.gradient_arrival_ns <= now_;
      case Neighbour::kNone:
        break;
    }
    return true;
  }

  // A forward pinned to a version (double buffering) waits until its stage has made that version.
  bool has_forward_version(const Action& a) const {
    return plan_.forward_reads.version_of(a.microbatch, a.stage) <= stage_version_[a.stage];
  }

  // Every device holding a copy of this stage's piece of the model has reached `step` (the all-reduce of
  // their gradients before the step).
  bool copies_arrived(int stage, int step) const {
    for (int copy = 0; copy < layout_.pipelines; ++copy) {
      const int twin = copy * layout_.stages_per_pipeline() + layout_.model_stage(stage);
      if (devices_[layout_.device(twin)].barrier_next_step <= step) return false;
    }
    return true;
  }

  bool barrier_complete(int step) const {
    return step < static_cast<int>(barrier_arrivals_.size()) && barrier_arrivals_[step] == layout_.devices;
  }

  void mark_dirty(int device) {
    if (devices_[device].dirty) return;
    devices_[device].dirty = true;
    // Within a pass devices pick in index order: one above the device being asked joins this pass,
    // one at or below it waits for the next pass.
    (device > asking_ ? this_pass_ : next_pass_).insert(device);
  }

  void dispatch_dirty_devices() {
    // A start can make other devices dirty at the same instant (a barrier completing), so passes repeat
    // until nobody is left to ask. Only dirty devices are visited: sweeps over many devices stay cheap.
    for (;;) {
      if (this_pass_.empty()) {
        if (next_pass_.empty()) break;
        this_pass_.swap(next_pass_);
      }
      while (!this_pass_.empty()) {
        const int d = this_pass_.pop_lowest();
        asking_ = d;
        devices_[d].dirty = false;
        try_start(d);
      }
      asking_ = -1;
    }
  }

  void try_start(int d) {
    DeviceState& dev = devices_[d];
    if (dev.busy || dev.finished || dev.stream_held_until_ns > now_) return;
    std::optional<Action> next = plan_.policies[d]->next(*this);
    if (!next) {
      dev.blocked_on.reset();
      dev.finished = plan_.policies[d]->finished();
      return;
    }
    const Action a = *next;
    validate(d, a);
    // Under copies of the model every step is an all-reduce between the copies of each stage, so devices
    // arrive at every step, barrier or not.
    if (a.kind == OpKind::U && (a.synchronized || layout_.pipelines > 1) &&
        a.microbatch >= dev.barrier_next_step) {
      // First the device's steps' work before the barrier (their gradient reductions), back to back on its
      // stream; then it arrives.
      if (dev.before_barrier_step != a.microbatch) {
        dev.before_barrier_step = a.microbatch;
        dev.before_barrier_ns = before_barrier_total_of(d, a.microbatch);
        if (dev.before_barrier_ns > 0 && record_) {
          auto& steps = trace_.before_barrier_ns;
          if (steps.empty()) steps.resize(layout_.devices);
          if (static_cast<int>(steps[d].size()) <= a.microbatch) steps[d].resize(a.microbatch + 1, 0);
          steps[d][a.microbatch] = dev.before_barrier_ns;
        }
        if (dev.before_barrier_ns > 0) {
          hold_stream(d, add_time_ns(now_, dev.before_barrier_ns, "a step's work before its barrier"));
          return;
        }
      }
      arrive_at_barrier(d, a.microbatch);
    }
    if (a.fused_with_next) {
      try_start_fused_pair(d, a);
      return;
    }
    if (!is_ready(a)) {
      dev.blocked_on = a;
      return;
    }
    dev.blocked_on.reset();
    plan_.policies[d]->started(a);
    // The second op of a fused pair: ready since the pair started, it runs the rest of the slot.
    const std::optional<TimeNs> duration_ns = std::exchange(dev.fused_partner_ns, std::nullopt);
    start(d, a, duration_ns);
  }

  // A forward fused with the device's next op (Action::fused_with_next): both must be ready, then the
  // forward takes its share of the overlapped slot and the partner the rest, right after it.
  void try_start_fused_pair(int d, const Action& f) {
    DeviceState& dev = devices_[d];
    const std::optional<Action> partner = plan_.policies[d]->after_next();
    if (f.kind != OpKind::F) {
      throw ScheduleError(fmt::format("device {}: {} is fused with the next op, but only a forward overlaps",
                                      d + 1, describe(f)));
    }
    if (!partner || (partner->kind != OpKind::B && partner->kind != OpKind::I) || partner->fused_with_next) {
      throw ScheduleError(
          fmt::format("device {}: {} is fused with the next op, which must be a B or I of "
                      "another microbatch (it is {})",
                      d + 1, describe(f), partner ? describe(*partner) : "the end of the list"));
    }
    if (partner->stage == f.stage && partner->microbatch == f.microbatch) {
      throw ScheduleError(
          fmt::format("device {}: {} is fused with {}: a microbatch's backward cannot overlap "
                      "its own forward",
                      d + 1, describe(f), describe(*partner)));
    }
    validate(d, *partner);
    if (!is_ready(f) || !is_ready(*partner)) {
      dev.blocked_on = is_ready(f) ? *partner : f;
      return;
    }
    dev.blocked_on.reset();
    const TimeNs forward_ns = costs_.duration(f);
    const TimeNs backward_ns = costs_.duration(*partner);
    const TimeNs slot_ns = costs_.overlapped_duration(f, *partner);
    if (forward_ns < 0 || backward_ns < 0 || slot_ns < 0) {
      throw ScheduleError(fmt::format("cost model gave {} overlapped with {} a negative duration",
                                      describe(f), describe(*partner)));
    }
    const TimeNs forward_share_ns = forward_ns + backward_ns == 0
                                        ? 0
                                        : static_cast<TimeNs>(static_cast<long double>(slot_ns) * forward_ns /
                                                              (forward_ns + backward_ns));
    dev.fused_partner_ns = slot_ns - forward_share_ns;
    plan_.policies[d]->started(f);
    start(d, f, forward_share_ns);
  }

  void validate(int d, const Action& a) const {
    if (a.stage < 0 || a.stage >= layout_.stages) {
      throw ScheduleError(fmt::format("device {} asked for {}: the pipeline has stages 1..{}", d + 1,
                                      describe(a), layout_.stages));
    }
    if (layout_.device(a.stage) != d) {
      throw ScheduleError(fmt::format("device {} asked for {}, but that stage lives on device {}", d + 1,
                                      describe(a), layout_.device(a.stage) + 1));
    }
    if (a.kind == OpKind::U) {
      if (a.microbatch < 0) throw ScheduleError(fmt::format("device {} asked for {}", d + 1, describe(a)));
      return;
    }
    if (a.microbatch < 0 || a.microbatch >= microbatches_) {
      throw ScheduleError(fmt::format("device {} asked for {}: microbatches are 0..{}", d + 1, describe(a),
                                      microbatches_ - 1));
    }
    if (!layout_.visits(a.stage, a.microbatch)) {
      throw ScheduleError(fmt::format(
          "device {} asked for {}: microbatch {} flows through pipeline {} of {}, "
          "stages {}..{}",
          d + 1, describe(a), a.microbatch, layout_.pipeline_of_microbatch(a.microbatch) + 1,
          layout_.pipelines, layout_.pipeline_of_microbatch(a.microbatch) * layout_.stages_per_pipeline() + 1,
          (layout_.pipeline_of_microbatch(a.microbatch) + 1) * layout_.stages_per_pipeline()));
    }
    const std::uint8_t done = state(a.stage, a.microbatch).done;
    const std::uint8_t writes = rule_of(a.kind).sets_done;
    if (done & writes) {
      throw ScheduleError(fmt::format("device {} asked for {} a second time", d + 1, describe(a)));
    }
  }

  // What device d's steps of `step` run before the barrier, in all (sim/barrier_work.h).
  TimeNs before_barrier_total_of(int d, int step) const {
    const std::optional<TimeNs> total = before_barrier_total(costs_, layout_, d, step);
    if (!total) {
      throw ScheduleError(
          fmt::format("cost model gave device {}'s step {} work before its barrier outside 0 "
                      "and the step's duration",
                      d + 1, step));
    }
    return *total;
  }

  void arrive_at_barrier(int d, int step) {
    DeviceState& dev = devices_[d];
    if (step < dev.barrier_next_step) return;
    if (static_cast<int>(barrier_arrivals_.size()) <= step) barrier_arrivals_.resize(step + 1, 0);
    dev.barrier_next_step = step + 1;
    bind_barrier(d, step);
    if (layout_.pipelines > 1) {
      // The point its copies' steps join at (a zero-time join like the barrier's).
      if (static_cast<int>(dev.arrivals.size()) <= step) dev.arrivals.resize(step + 1);
      if (dev.last_op.known) {
        dev.arrivals[step] = {dev.last_op.finish_ns + before_barrier_of(d, step), 0, dev.last_op.op, true};
      }
    }
    if (++barrier_arrivals_[step] == layout_.devices || layout_.pipelines > 1) {
      for (int other = 0; other < layout_.devices; ++other) mark_dirty(other);
    }
  }

  void start(int d, const Action& a, std::optional<TimeNs> duration_ns = std::nullopt) {
    DeviceState& dev = devices_[d];
    TimeNs duration = duration_ns ? *duration_ns : costs_.duration(a);
    // A step past its barrier runs what it did not run before it.
    if (!duration_ns && a.kind == OpKind::U && (a.synchronized || layout_.pipelines > 1)) {
      duration -= costs_.before_barrier_ns(a);
    }
    if (duration < 0) {
      throw ScheduleError(
          fmt::format("cost model gave {} a negative duration ({} ns)", describe(a), duration));
    }
    const TimeNs end_ns = add_time_ns(now_, duration, "an op's end");
    const bool stashed = plan_.backward_reads == BackwardReads::kStashedWeights;
    int version = stage_version_[a.stage];
    const OpRule rule = rule_of(a.kind);
    if (rule.pins_forward_version) {
      const int pinned = plan_.forward_reads.version_of(a.microbatch, a.stage);
      if (pinned >= 0) version = pinned;
      MicrobatchState& st = state(a.stage, a.microbatch);
      st.forward_version = version;
      if (observer_) {
        // The stash takes its reference before the pin gives its own up, so the version is never
        // unreferenced in between.
        if (stashed) ++version_life(a.stage, version).references;
        if (pinned >= 0) release_version(a.stage, pinned);
      }
    }
    if (rule.holds_activations) {
      ++stage_in_flight_[a.stage];
      trace_.stage_peak_in_flight[a.stage] =
          std::max(trace_.stage_peak_in_flight[a.stage], stage_in_flight_[a.stage]);
      ++dev.in_flight;
      change_memory(d, costs_.activation_bytes(a.stage));
    } else if (rule.reads_stashed_version && stashed) {
      version = state(a.stage, a.microbatch).forward_version;
    }
    dev.busy = true;
    dev.running = a;
    dev.running_end_ns = end_ns;
    track_critical_path(d, a, duration);
    if (observer_) observe_start(d, a, version, end_ns, stashed);
    if (record_) {
      trace_.ops.push_back({a, d, version, now_, end_ns});
    } else {
      ++trace_.op_count;
    }
    events_.push(next_event(end_ns, d, true));
  }

  // What a streaming observer learns when an op starts: the op, the versions it reads and retires, and its
  // microbatch's drift once its last gradient op starts.
  void observe_start(int d, const Action& a, int version, TimeNs end_ns, bool stashed) {
    VersionLife& read = version_life(a.stage, version);
    read.last_read_end_ns = std::max(read.last_read_end_ns, end_ns);
    if (a.kind == OpKind::U) {
      read.replaced_end_ns = end_ns;
      make_version(a.stage, version + 1);
      retire_if_done(a.stage, version);
    } else if (is_gradient_op(a.kind)) {
      MicrobatchState& st = state(a.stage, a.microbatch);
      st.gradient_version = std::max(st.gradient_version, version);
      if (a.kind != OpKind::I) {  // B, or the W after an I: the last gradient op
        observer_->gradient_complete(
            {a.stage, a.microbatch, st.forward_version, st.gradient_version, end_ns});
        if (stashed) release_version(a.stage, st.forward_version);
      }
    }
    observer_->op_started({a, d, version, now_, end_ns});
  }

  VersionLife& version_life(int stage, int version) {
    const int index = version - version_base_[stage];
    if (index < 0 || index >= static_cast<int>(versions_[stage].size()) ||
        versions_[stage][index].references < 0) {
      throw ScheduleError(
          fmt::format("engine: stage {} read version {} after it was retired", stage + 1, version));
    }
    return versions_[stage][index];
  }

  // A new version exists from its U's start on (its forward may be pinned to it); it holds a reference for
  // every forward pinned to it.
  void make_version(int stage, int version) {
    VersionLife life;
    const ForwardReads& reads = plan_.forward_reads;
    if (reads.pins(stage)) {
      const long p = reads.period_microbatches;
      const long lag = reads.lag(stage);
      const long first = version == 0 ? 0 : (version + lag) * p;
      const long end = (version + lag + 1) * p;
      life.references = static_cast<int>(std::max(0L, std::min<long>(end, microbatches_) - first));
    }
    if (versions_[stage].empty()) version_base_[stage] = version;
    versions_[stage].push_back(life);
  }

  void release_version(int stage, int version) {
    --version_life(stage, version).references;
    retire_if_done(stage, version);
  }

  void retire_if_done(int stage, int version) {
    VersionLife& life = version_life(stage, version);
    if (life.replaced_end_ns == kNever || life.references != 0) return;
    observer_->version_retired(stage, version, std::max(life.replaced_end_ns, life.last_read_end_ns));
    life.references = -1;  // retired
    auto& lives = versions_[stage];
    while (!lives.empty() && lives.front().references < 0) {
      lives.pop_front();
      ++version_base_[stage];
    }
  }

  // Every version but the newest must have been retired: a reference left over is an engine bug.
  void check_versions_retired() const {
    if (!observer_) return;
    for (int stage = 0; stage < layout_.stages; ++stage) {
      if (versions_[stage].size() > 1) {
        throw ScheduleError(fmt::format("engine: version {} of stage {} is still referenced after the run",
                                        version_base_[stage], stage + 1));
      }
    }
  }

  // The critical path, inline: each op's earliest finish over the realized task graph (analysis/
  // task_graph.h: data edges carrying the transfer delay each had, F before its B or I, I before its W,
  // same-device order, synchronized steps after every device's last op before the barrier), with the
  // predecessor that bound it. Called as the op starts, when all of those have ended.
  void track_critical_path(int d, const Action& a, TimeNs duration) {
    const std::size_t ops = record_ ? trace_.ops.size() : static_cast<std::size_t>(trace_.op_count);
    if (ops >= static_cast<size_t>(INT32_MAX)) {
      throw InputError("the run has more than 2^31 ops; lower the microbatches or batches");
    }
    const auto op = static_cast<std::int32_t>(ops);
    TimeNs ready = 0;
    std::int32_t parent = -1;
    bool bound = false;
    const auto consider = [&](const DagPoint& from, TimeNs arrival_ns) {
      if (!from.known) return;
      const TimeNs candidate = from.finish_ns + std::max<TimeNs>(0, arrival_ns - from.end_ns);
      if (!bound || candidate > ready) {
        ready = candidate;
        parent = from.op;
        bound = true;
      }
    };
    consider(devices_[d].last_op, 0);
    if (a.kind == OpKind::U) {
      if (a.synchronized) {
        consider(barrier_bound_[a.microbatch], 0);
      } else if (layout_.pipelines > 1) {
        for (int copy = 0; copy < layout_.pipelines; ++copy) {
          const int twin = copy * layout_.stages_per_pipeline() + layout_.model_stage(a.stage);
          const DeviceState& other = devices_[layout_.device(twin)];
          if (a.microbatch < static_cast<int>(other.arrivals.size()))
            consider(other.arrivals[a.microbatch], 0);
        }
      }
    } else {
      MicrobatchState& st = state(a.stage, a.microbatch);
      switch (a.kind) {
        case OpKind::F:
          if (!layout_.is_first_stage(a.stage)) {
            consider(state(a.stage - 1, a.microbatch).forward, st.activation_arrival_ns);
          }
          break;
        case OpKind::B:
        case OpKind::I:
          consider(st.forward, 0);
          if (!layout_.is_last_stage(a.stage)) {
            consider(state(a.stage + 1, a.microbatch).input_grad, st.gradient_arrival_ns);
          }
          break;
        case OpKind::W:
          consider(st.input_grad, 0);
          break;
        case OpKind::U:
          break;
      }
    }
    // The engine starts an op only once all of those are satisfied, so no earliest start can be later.
    if (ready > now_) {
      throw ScheduleError(
          fmt::format("engine: {} on device {} started at {} ns before its dependencies "
                      "allow ({} ns)",
                      describe(a), d + 1, now_, ready));
    }
    const DagPoint point{ready + duration, now_ + duration, op, true};
    if (a.kind == OpKind::F) state(a.stage, a.microbatch).forward = point;
    if (a.kind == OpKind::B || a.kind == OpKind::I) state(a.stage, a.microbatch).input_grad = point;
    if (record_) dag_parent_.push_back(parent);
    if (!critical_end_.known || point.finish_ns > critical_end_.finish_ns) critical_end_ = point;
    devices_[d].last_op = point;
  }

  // A device reaching barrier `step` after the op it ran last: a synchronized U(step) starts no earlier
  // than that op's earliest finish.
  void bind_barrier(int d, int step) {
    if (static_cast<int>(barrier_bound_.size()) <= step) barrier_bound_.resize(step + 1);
    DagPoint& bound = barrier_bound_[step];
    const DagPoint& last = devices_[d].last_op;
    // The barrier is a zero-time join: an op after it waits for the bound's finish, not for a transfer;
    // the device reaches it after its work before the barrier.
    const TimeNs arrival = last.finish_ns + before_barrier_of(d, step);
    if (last.known && (!bound.known || arrival > bound.finish_ns)) bound = {arrival, 0, last.op, true};
  }

  TimeNs before_barrier_of(int d, int step) const {
    const DeviceState& dev = devices_[d];
    return dev.before_barrier_step == step ? dev.before_barrier_ns : 0;
  }

  void record_critical_path() {
    if (!critical_end_.known) return;
    trace_.critical_path_ns = critical_end_.finish_ns;
    if (!record_) return;
    for (std::int32_t v = critical_end_.op; v >= 0; v = dag_parent_[v]) trace_.critical_path.push_back(v);
    std::reverse(trace_.critical_path.begin(), trace_.critical_path.end());
  }

  void finish_op(int d) {
    DeviceState& dev = devices_[d];
    const Action a = dev.running;
    dev.busy = false;
    mark_dirty(d);
    if (a.kind == OpKind::U) {
      ++stage_version_[a.stage];
      return;
    }
    MicrobatchState& st = state(a.stage, a.microbatch);
    const OpRule rule = rule_of(a.kind);
    st.done |= rule.sets_done;
    release_deferred_transfers();
    if (rule.frees_activations) {
      --stage_in_flight_[a.stage];
      --dev.in_flight;
    }
    if (rule.frees_activations || rule.weight_grad_bytes_sign != 0) {
      Bytes delta = rule.frees_activations ? -costs_.activation_bytes(a.stage) : 0;
      if (rule.weight_grad_bytes_sign != 0) {
        delta += rule.weight_grad_bytes_sign * costs_.weight_grad_activation_bytes(a.stage);
      }
      change_memory(d, delta);
    }
    if (rule.output_to == Neighbour::kNext && !layout_.is_last_stage(a.stage)) {
      send(a.kind, a.stage, a.stage + 1, a.microbatch);
    }
    if (rule.output_to == Neighbour::kPrevious && !layout_.is_first_stage(a.stage))
      send(a.kind, a.stage, a.stage - 1, a.microbatch);
    if (state(a.stage, a.microbatch).done == kAllDone) mb_state_.stage_finished(a.microbatch);
  }

  void send(OpKind producer, int src_stage, int dst_stage, int mb) {
    const int src = layout_.device(src_stage);
    const int dst = layout_.device(dst_stage);
    TimeNs arrival = now_;
    if (src != dst) {
      const Bytes bytes = costs_.transfer_bytes(std::min(src_stage, dst_stage));
      const bool blocking = comm_.blocks_streams();
      if (blocking && !gates_.empty() && !gates_open(src_stage, dst_stage > src_stage, mb)) {
        // Posted only once both devices reach its SEND and RECV: the op that ends the last gate sends it.
        deferred_transfers_.push_back({producer, src_stage, dst_stage, mb});
        return;
      }
      // A blocking transfer waits for the op the receiver is running, never for another transfer: transfers
      // on one device overlap each other (a batched isend/irecv), so blocking adds no deadlock.
      const TimeNs ready =
          blocking && devices_[dst].busy ? std::max(now_, devices_[dst].running_end_ns) : now_;
      const TransferTiming timing = comm_.send(src, dst, bytes, ready);
      arrival = timing.arrival_ns;
      const TransferRecord transfer{producer, src_stage, dst_stage,       mb,      src,     dst,
                                    bytes,    now_,      timing.start_ns, arrival, blocking};
      if (record_) {
        trace_.transfers.push_back(transfer);
      } else {
        observer_->transfer_sent(transfer);
      }
      if (blocking) {
        hold_stream(src, arrival);
        hold_stream(dst, arrival);
      }
    }
    MicrobatchState& st = state(dst_stage, mb);
    (dst_stage > src_stage ? st.activation_arrival_ns : st.gradient_arrival_ns) = arrival;
    if (arrival == now_) {
      mark_dirty(dst);
    } else {
      events_.push(next_event(arrival, dst, false));
    }
  }

  bool gates_open(int producer_stage, bool forward, int mb) {
    gates_.ops_before(producer_stage, forward, mb, gate_ops_);
    for (const Action& a : gate_ops_) {
      const std::uint8_t ends = rule_of(a.kind).sets_done;
      if ((std::as_const(*this).state(a.stage, a.microbatch).done & ends) != ends) return false;
    }
    return true;
  }

  // Transfers whose last gate an op just ended go out now, in the order they were held.
  void release_deferred_transfers() {
    if (deferred_transfers_.empty()) return;
    std::vector<DeferredTransfer> waiting;
    waiting.swap(deferred_transfers_);
    for (const DeferredTransfer& t : waiting) send(t.producer, t.src_stage, t.dst_stage, t.mb);
  }

  Event next_event(TimeNs time_ns, int device, bool op_end) {
    if (seq_ > Event::kMaxSeq) throw InputError("the run has more than 2^40 events; lower the microbatches");
    return Event(time_ns, seq_++, device, op_end);
  }

  // The device computes nothing before `until_ns`; it is asked again then.
  void hold_stream(int d, TimeNs until_ns) {
    TimeNs& held = devices_[d].stream_held_until_ns;
    if (until_ns <= held) return;
    held = until_ns;
    if (until_ns > now_) events_.push(next_event(until_ns, d, false));
  }

  void change_memory(int d, Bytes delta) {
    DeviceState& dev = devices_[d];
    // Input bytes are bounded (base/value_ranges.h); the sum over many in-flight microbatches is checked too.
    if (__builtin_add_overflow(dev.activation_bytes, delta, &dev.activation_bytes)) {
      throw InputError(
          fmt::format("device {}'s activation memory passes 2^63 bytes; lower the activation "
                      "bytes or the microbatches in flight",
                      d + 1));
    }
    if (record_) {
      auto& samples = trace_.memory[d];
      // One sample per instant, unless the instant falls after rising (ops of 0 ns run one after another):
      // then both states stay, so that analyses see what was held.
      if (samples.back().time_ns == now_ && dev.activation_bytes >= samples.back().activation_bytes) {
        samples.back().activation_bytes = dev.activation_bytes;
        samples.back().in_flight = dev.in_flight;
      } else {
        samples.push_back({now_, dev.activation_bytes, dev.in_flight});
      }
    } else {
      observer_->memory_changed(d, {now_, dev.activation_bytes, dev.in_flight});
    }
    trace_.peak_activation_bytes[d] = std::max(trace_.peak_activation_bytes[d], dev.activation_bytes);
    trace_.peak_in_flight[d] = std::max(trace_.peak_in_flight[d], dev.in_flight);
  }

  std::string missing_dependency(const Action& a) const {
    if (a.kind == OpKind::U) {
      std::string missing;
      for (int d = 0; d < layout_.devices; ++d) {
        if (devices_[d].barrier_next_step <= a.microbatch) missing += fmt::format(" {}", d + 1);
      }
      if (!a.synchronized) {
        return fmt::format(
            "the all-reduce of stage {}'s copies of the model at step {}, which devices{} have "
            "not reached",
            a.stage + 1, a.microbatch, missing);
      }
      return fmt::format("the barrier of step {}, which devices{} have not reached", a.microbatch, missing);
    }
    const MicrobatchState& st = state(a.stage, a.microbatch);
    const OpRule rule = rule_of(a.kind);
    if ((st.done & rule.needs_done) != rule.needs_done) {
      return describe({rule.needs_done_op, false, a.stage, a.microbatch}) + " has not run";
    }
    if (rule.pins_forward_version && !has_forward_version(a)) {
      const int version = plan_.forward_reads.version_of(a.microbatch, a.stage);
      return fmt::format("version {} of stage {}'s weights ({} has not run)", version, a.stage + 1,
                         describe(optimizer_step(a.stage, version - 1, false)));
    }
    // An input whose producer ran but that never arrived was held back at its SEND and RECV points.
    const auto held = [&](int producer_stage, std::uint8_t done_bit) {
      return (state(producer_stage, a.microbatch).done & done_bit) != 0;
    };
    if (rule.input_from == Neighbour::kPrevious) {
      if (held(a.stage - 1, kForwardDone)) {
        return fmt::format("the activation of mb {} from stage {}, held back at its SEND and RECV points",
                           a.microbatch, a.stage);
      }
      return describe(forward(a.stage - 1, a.microbatch)) + " has not run";
    }
    if (rule.input_from == Neighbour::kNext) {
      if (held(a.stage + 1, kInputGradDone)) {
        return fmt::format("the gradient of mb {} from stage {}, held back at its SEND and RECV points",
                           a.microbatch, a.stage + 2);
      }
      return fmt::format("the gradient of mb {} from stage {} (its B or I has not run)", a.microbatch,
                         a.stage + 2);
    }
    return "?";
  }

  void check_all_finished() const {
    std::string blocked;
    for (int d = 0; d < layout_.devices; ++d) {
      const DeviceState& dev = devices_[d];
      if (dev.finished) continue;
      if (dev.blocked_on) {
        blocked += fmt::format("; device {} waits to run {}: needs {}", d + 1, describe(*dev.blocked_on),
                               missing_dependency(*dev.blocked_on));
      } else {
        blocked += fmt::format("; device {} has ops left but none is ready", d + 1);
      }
    }
    for (const DeferredTransfer& t : deferred_transfers_) {
      blocked += fmt::format("; the {} of mb {} from stage {} to stage {} waits for its SEND and RECV points",
                             t.dst_stage > t.src_stage ? "activation" : "gradient", t.mb, t.src_stage + 1,
                             t.dst_stage + 1);
    }
    if (!blocked.empty()) {
      throw DeadlockError(fmt::format("deadlock at {:.6f} ms, no event pending{}", ns_to_ms(now_), blocked));
    }
  }

  ExecutionPlan& plan_;
  const PipelineLayout& layout_;
  const CostModel& costs_;
  CommModel& comm_;
  int microbatches_ = 0;
  TimeNs now_ = 0;
  std::uint64_t seq_ = 0;
  DeviceSet this_pass_;  // dirty devices still to ask in the current pass, lowest index first
  DeviceSet next_pass_;
  int asking_ = -1;                             // the device being asked now; -1 between passes
  MicrobatchWindow<MicrobatchState> mb_state_;  // the microbatches in flight
  std::vector<DeviceState> devices_;
  std::vector<int> stage_version_;
  std::vector<int> stage_in_flight_;
  std::vector<int> barrier_arrivals_;
  // Per optimizer step: the latest-finishing (earliest finish) op run before the barrier by any device.
  std::vector<DagPoint> barrier_bound_;
  DagPoint critical_end_;                 // the op with the latest earliest finish so far
  std::vector<std::int32_t> dag_parent_;  // per op, recorded runs only: the predecessor that bound its start
  RunObserver* observer_;                 // streaming: told everything, nothing recorded
  bool record_;                           // record every op, transfer and memory sample in the trace
  std::vector<std::deque<VersionLife>> versions_;  // per stage, streaming only: versions not yet retired
  std::vector<int> version_base_;                  // per stage: the version versions_[stage].front() is
  EventQueue events_;
  std::vector<Event> instant_events_;  // the events of the instant being handled
  struct DeferredTransfer {
    OpKind producer;
    int src_stage;
    int dst_stage;
    int mb;
  };
  TransferGateIndex gates_;  // blocking comm only: where the schedule posts its transfers
  std::vector<Action> gate_ops_;
  std::vector<DeferredTransfer> deferred_transfers_;  // made, not yet posted
  RunTrace trace_;
};

}  // namespace

RunTrace simulate(ExecutionPlan& plan, const CostModel& costs, CommModel& comm) {
  Engine engine(plan, costs, comm, nullptr);
  return engine.run();
}

RunTrace simulate(ExecutionPlan& plan, const CostModel& costs, CommModel& comm, RunObserver& observer) {
  Engine engine(plan, costs, comm, &observer);
  return engine.run();
}

}  // namespace pipesim
