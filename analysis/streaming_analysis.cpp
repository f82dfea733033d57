#include "analysis/streaming_analysis.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/errors.h"

namespace pipesim {

StreamingAnalysis::StreamingAnalysis(StreamingConfig config) : config_(std::move(config)) {
  const PipelineLayout& layout = config_.layout;
  const int m = config_.microbatches_per_batch;
  const RunWindow& w = config_.window;
  if (static_cast<int>(config_.static_memory.size()) != layout.stages) {
    throw InputError("streaming analysis: static memory must have one entry per stage of the run");
  }
  drift_window_ = {w.first_microbatch, w.end_microbatch};
  total_run_microbatches_ = w.total_batches * m;
  devices_.resize(layout.devices);
  stages_.resize(layout.stages);
  for (int stage = 0; stage < layout.stages; ++stage) {
    const StageStaticMemory& s = config_.static_memory[stage];
    devices_[layout.device(stage)].fixed_bytes += s.gradient_bytes + s.optimizer_bytes + s.extra_bytes;
    push_version_change(0, stage, +1);  // version 0 exists from the start
  }
  for (DeviceTally& d : devices_) d.memory.peak_bytes = -1;
  forward_starts_.assign(static_cast<size_t>(w.microbatches()) + 1, kNever);
  for (int microbatch : {w.first_microbatch, w.middle_microbatch(), w.end_microbatch}) {
    if (microbatch < total_run_microbatches_) busy_at_.push_back({microbatch, kNever, {}, {}});
  }
}

void StreamingAnalysis::push_version_change(TimeNs time_ns, int stage, int live_delta) {
  if (time_ns < present_ns_) {
    throw ScheduleError(fmt::format(
        "streaming analysis: a change at {} ns arrived after the run passed {} ns", time_ns, present_ns_));
  }
  version_changes_.push({time_ns, static_cast<std::int32_t>(stage), static_cast<std::int32_t>(live_delta)});
}

void StreamingAnalysis::touch_device(int device) {
  if (devices_[device].touched) return;
  devices_[device].touched = true;
  touched_devices_.push_back(device);
}

void StreamingAnalysis::advance_to(TimeNs now_ns) {
  if (now_ns <= present_ns_) return;
  apply_changes_before(now_ns);
  present_ns_ = now_ns;
}

// Every change of one instant is applied before the instant is sampled (the engine ends ops before it
// starts others at the same time), as the trace-based sweeps do. Activation changes all happen at the
// engine's present; version changes may lie ahead of it.
void StreamingAnalysis::apply_changes_before(TimeNs time_ns) {
  for (;;) {
    TimeNs instant = activation_devices_.empty() ? kNever : present_ns_;
    if (!version_changes_.empty()) instant = std::min(instant, version_changes_.top().time_ns);
    if (instant >= time_ns || instant == kNever) return;
    if (instant == present_ns_) {
      for (int device : activation_devices_) {
        DeviceTally& d = devices_[device];
        d.activation_bytes = d.activation_bytes_now;
        d.pending_activation = false;
        d.activation_bytes_instant_pending = false;
        touch_device(device);
      }
      activation_devices_.clear();
    }
    while (!version_changes_.empty() && version_changes_.top().time_ns == instant) {
      const VersionChange c = version_changes_.top();
      version_changes_.pop();
      StageTally& s = stages_[c.stage];
      s.live_versions += c.live_delta;
      const int device = config_.layout.device(c.stage);
      devices_[device].weight_bytes += c.live_delta * config_.static_memory[c.stage].weight_bytes;
      if (!s.touched) touched_stages_.push_back(c.stage);
      s.touched = true;
      touch_device(device);
    }
    for (int stage : touched_stages_) {
      StageTally& s = stages_[stage];
      s.versions_max = std::max(s.versions_max, s.live_versions);
      s.touched = false;
    }
    touched_stages_.clear();
    for (int device : touched_devices_) {
      DeviceTally& d = devices_[device];
      d.touched = false;
      // The instant's largest activation state (ops of 0 ns), with the instant's weights.
      const Bytes activations = std::max(d.activation_bytes, d.activation_bytes_instant_max);
      d.activation_bytes_instant_max = d.activation_bytes;
      const Bytes total = d.weight_bytes + d.fixed_bytes + activations;
      if (total > d.memory.peak_bytes) {
        d.memory.peak_bytes = total;
        d.memory.peak_time_ns = instant;
        d.memory.peak_weight_bytes = d.weight_bytes;
        d.memory.peak_activation_bytes = activations;
      }
    }
    touched_devices_.clear();
  }
}

void StreamingAnalysis::op_started(const OpRecord& op) {
  advance_to(op.start_ns);
  ++ops_;
  const Action& a = op.action;
  const int m = config_.microbatches_per_batch;
  DeviceTally& d = devices_[op.device];
  d.busy_ns += op.duration_ns();
  d.last_start_ns = op.start_ns;
  d.last_end_ns = op.end_ns;
  if (a.kind == OpKind::U) {
    push_version_change(op.end_ns, a.stage, +1);  // the version it makes
    // The first step starting once a gradient has ended applies it.
    StageTally& s = stages_[a.stage];
    settle_gradients(s, op.start_ns);
    for (const EndedGradients& g : s.ended) {
      s.drift.add_staleness(op.weight_version - g.forward_version, g.in_window, g.count);
    }
    s.ended.clear();
    return;
  }
  d.work_ns += op.duration_ns();
  d.last_work_start_ns = op.start_ns;
  d.last_work_end_ns = op.end_ns;
  const RunWindow& w = config_.window;
  if (a.microbatch / m == w.first_microbatch / m) {
    d.span_begin_ns = std::min(d.span_begin_ns, op.start_ns);
    d.span_end_ns = std::max(d.span_end_ns, op.end_ns);
  }
  if (a.kind == OpKind::F && config_.layout.is_first_stage(a.stage)) {
    const long j = static_cast<long>(a.microbatch) - w.first_microbatch;
    if (j >= 0 && j < static_cast<long>(forward_starts_.size())) {
      forward_starts_[j] = std::min(forward_starts_[j], op.start_ns);
      capture_busy(a.microbatch, op.start_ns);
    }
  }
}

// Devices run one op at a time and ops arrive in start order, so when time T becomes known only each
// device's last op can reach past it: busy(d, T) = its ops' time minus the part of its last op after T.
void StreamingAnalysis::capture_busy(int microbatch, TimeNs time_ns) {
  for (BusyAt& at : busy_at_) {
    if (at.microbatch != microbatch || at.time_ns != kNever) continue;
    at.time_ns = time_ns;
    at.busy_ns.resize(devices_.size());
    at.work_ns.resize(devices_.size());
    for (size_t i = 0; i < devices_.size(); ++i) {
      const DeviceTally& d = devices_[i];
      at.busy_ns[i] = d.busy_ns - std::max<TimeNs>(0, d.last_end_ns - std::max(d.last_start_ns, time_ns));
      at.work_ns[i] =
          d.work_ns - std::max<TimeNs>(0, d.last_work_end_ns - std::max(d.last_work_start_ns, time_ns));
    }
  }
}

TimeNs StreamingAnalysis::busy_at(int microbatch, int device, bool work_only) const {
  if (microbatch >= total_run_microbatches_) {  // the makespan: every op has ended
    return work_only ? devices_[device].work_ns : devices_[device].busy_ns;
  }
  for (const BusyAt& at : busy_at_) {
    if (at.microbatch == microbatch && at.time_ns != kNever) {
      return work_only ? at.work_ns[device] : at.busy_ns[device];
    }
  }
  throw ScheduleError(fmt::format("streaming analysis: microbatch {} never started on stage 1", microbatch));
}

TimeNs StreamingAnalysis::forward_start_ns(int microbatch) const {
  const long j = static_cast<long>(microbatch) - config_.window.first_microbatch;
  if (j < 0 || j >= static_cast<long>(forward_starts_.size())) {
    throw ScheduleError(fmt::format("streaming analysis: microbatch {} is outside the window", microbatch));
  }
  return forward_starts_[j];
}

void StreamingAnalysis::memory_changed(int device, const MemorySample& sample) {
  advance_to(sample.time_ns);
  DeviceTally& d = devices_[device];
  if (!d.pending_activation) activation_devices_.push_back(device);
  d.pending_activation = true;
  d.activation_bytes_now = sample.activation_bytes;
  // Ops of 0 ns run one after another at one instant: every activation state they pass through counts
  // towards the peak, with the instant's weights (analysis/memory_model.cpp counts it so too).
  d.activation_bytes_instant_max = d.activation_bytes_instant_pending
                                       ? std::max(d.activation_bytes_instant_max, sample.activation_bytes)
                                       : sample.activation_bytes;
  d.activation_bytes_instant_pending = true;
}

void StreamingAnalysis::gradient_complete(const GradientRecord& g) {
  if (g.forward_version < 0 || g.gradient_version < 0) return;
  const bool in_window =
      g.microbatch >= drift_window_.first_microbatch && g.microbatch < drift_window_.end_microbatch;
  StageTally& s = stages_[g.stage];
  s.drift.add_drift(g.gradient_version - g.forward_version, in_window);
  settle_gradients(s, present_ns_);
  s.pending.push({g.gradient_end_ns, g.forward_version, in_window});
}

// Steps start in time order, so a gradient ended by the present is applied by the stage's next step, and
// which gradient ended when no longer matters.
void StreamingAnalysis::settle_gradients(StageTally& stage, TimeNs time_ns) {
  while (!stage.pending.empty() && stage.pending.top().gradient_end_ns <= time_ns) {
    const PendingStaleness p = stage.pending.top();
    stage.pending.pop();
    auto same = std::find_if(stage.ended.rbegin(), stage.ended.rend(), [&](const EndedGradients& e) {
      return e.forward_version == p.forward_version && e.in_window == p.in_window;
    });
    if (same != stage.ended.rend()) {
      ++same->count;
    } else {
      stage.ended.push_back({p.forward_version, p.in_window, 1});
    }
  }
}

void StreamingAnalysis::version_retired(int stage, int /*version*/, TimeNs dead_ns) {
  push_version_change(dead_ns, stage, -1);
}

void StreamingAnalysis::run_finished(TimeNs makespan_ns) {
  makespan_ns_ = makespan_ns;
  apply_changes_before(kNever);
  finished_ = true;
}

int StreamingAnalysis::forward_gap_repeat(int first_microbatch, int end_microbatch) const {
  if (first_microbatch != config_.window.first_microbatch ||
      end_microbatch != config_.window.end_microbatch) {
    throw ScheduleError("streaming analysis: forward gaps are kept for the configured window only");
  }
  return pipesim::forward_gap_repeat(forward_starts_);
}

bool StreamingAnalysis::halves_agree(const RunWindow& window) const {
  if (window.first_microbatch != config_.window.first_microbatch ||
      window.end_microbatch != config_.window.end_microbatch) {
    throw ScheduleError("streaming analysis: halves are kept for the configured window only");
  }
  const int mid = window.middle_microbatch();
  HalvesTally tally;
  tally.begin_ns = forward_start_ns(window.first_microbatch);
  tally.middle_ns = forward_start_ns(mid);
  tally.end_ns = forward_start_ns(window.end_microbatch);
  for (size_t d = 0; d < devices_.size(); ++d) {
    const int device = static_cast<int>(d);
    const TimeNs middle = busy_at(mid, device, false);
    tally.first_busy_ns.push_back(middle - busy_at(window.first_microbatch, device, false));
    tally.second_busy_ns.push_back(busy_at(window.end_microbatch, device, false) - middle);
    tally.work_ns.push_back(devices_[d].work_ns);
  }
  tally.ops = ops_;
  tally.total_microbatches = config_.total_microbatches;
  return pipesim::halves_agree(tally, window);
}

RunMetrics StreamingAnalysis::metrics(const MetricsInput& input, const RunTrace& summary) const {
  const RunWindow& w = config_.window;
  MetricsTally tally;
  tally.window_begin_ns = forward_start_ns(w.first_microbatch);
  tally.window_end_ns =
      w.end_microbatch < total_run_microbatches_ ? forward_start_ns(w.end_microbatch) : makespan_ns_;
  tally.makespan_ns = makespan_ns_;
  tally.ops = ops_;
  tally.total_microbatches = summary.total_microbatches;
  tally.devices.resize(devices_.size());
  for (size_t i = 0; i < devices_.size(); ++i) {
    const int d = static_cast<int>(i);
    MetricsTally::Device& t = tally.devices[i];
    const DeviceTally& s = devices_[i];
    t.work_total_ns = s.work_ns;
    t.busy_in_window_ns = busy_at(w.end_microbatch, d, false) - busy_at(w.first_microbatch, d, false);
    t.work_in_window_ns = busy_at(w.end_microbatch, d, true) - busy_at(w.first_microbatch, d, true);
    t.span_begin_ns = s.span_begin_ns;
    t.span_end_ns = s.span_end_ns;
    t.peak_activation_bytes = summary.peak_activation_bytes[i];
    t.peak_in_flight = summary.peak_in_flight[i];
  }
  return metrics_from_tally(tally, input);
}

DriftReport StreamingAnalysis::drift(const DriftWindow& window, const RunTrace& summary) const {
  if (window.first_microbatch != drift_window_.first_microbatch ||
      window.end_microbatch != drift_window_.end_microbatch) {
    throw ScheduleError("streaming analysis: drift is measured over the configured window only");
  }
  DriftReport report;
  report.stages.resize(stages_.size());
  for (size_t stage = 0; stage < stages_.size(); ++stage) {
    StageDrift& out = report.stages[stage];
    stages_[stage].drift.finish(out);
    out.weight_versions_max = stages_[stage].versions_max;
    out.in_flight_max = summary.stage_peak_in_flight[stage];
  }
  return report;
}

MemoryReport StreamingAnalysis::memory() const {
  MemoryReport report;
  for (int d = 0; d < config_.layout.devices; ++d) {
    DeviceMemory device = devices_[d].memory;
    device.fixed_bytes = 0;
    for (int stage : config_.layout.stages_on(d)) add_static_memory(device, config_.static_memory[stage]);
    for (int stage : config_.layout.stages_on(d)) {
      device.weight_versions_max = std::max(device.weight_versions_max, stages_[stage].versions_max);
    }
    report.devices.push_back(std::move(device));
  }
  return report;
}

}  // namespace pipesim
