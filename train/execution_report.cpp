#include "train/execution_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "analysis/drift.h"
#include "analysis/memory_model.h"
#include "base/errors.h"
#include "report/csv.h"
#include "report/report.h"
#include "sim/metrics.h"
#include "sim/steady_state.h"

namespace pipesim {

RunTrace executed_trace(const ExecutedSchedule& run) {
  RunTrace trace;
  trace.layout = run.layout;
  trace.total_microbatches = run.spec.microbatches * run.spec.batches;
  std::vector<executor::ExecutedOp> ops = run.result.ops;
  TimeNs origin = ops.empty() ? 0 : ops.front().start_ns;
  for (const auto& op : ops) origin = std::min(origin, op.start_ns);
  // Start order; ties keep the executor's order (replay: the engine's own).
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  const int devices = run.layout.devices;
  trace.memory.assign(devices, {MemorySample{0, 0, 0}});
  trace.peak_activation_bytes.assign(devices, 0);
  trace.peak_in_flight.assign(devices, 0);
  // In-flight changes per device: +1 at an F's start, -1 at the end of the op that frees its activations.
  struct Change {
    TimeNs time_ns;
    int device;
    int delta;
    Bytes live_after;  // -1: unchanged
  };
  std::vector<Change> changes;
  for (const auto& op : ops) {
    const TimeNs start = op.start_ns - origin;
    const TimeNs end = op.end_ns - origin;
    trace.ops.push_back({op.action, op.device, op.weight_version, start, end});
    trace.makespan_ns = std::max(trace.makespan_ns, end);
    const bool frees = op.action.kind == OpKind::B || op.action.kind == OpKind::I;
    if (op.action.kind == OpKind::F) changes.push_back({start, op.device, +1, -1});
    changes.push_back({end, op.device, frees ? -1 : 0, op.live_activation_bytes});
  }
  // At one instant, ops end before others start (as in the engine).
  std::stable_sort(changes.begin(), changes.end(), [](const Change& a, const Change& b) {
    return a.time_ns != b.time_ns ? a.time_ns < b.time_ns : a.delta < b.delta;
  });
  std::vector<int> in_flight(devices, 0);
  std::vector<Bytes> live(devices, 0);
  for (const Change& c : changes) {
    in_flight[c.device] += c.delta;
    if (c.live_after >= 0) live[c.device] = c.live_after;
    auto& samples = trace.memory[c.device];
    if (samples.back().time_ns == c.time_ns) {
      samples.back() = {c.time_ns, live[c.device], in_flight[c.device]};
    } else {
      samples.push_back({c.time_ns, live[c.device], in_flight[c.device]});
    }
    trace.peak_activation_bytes[c.device] = std::max(trace.peak_activation_bytes[c.device], live[c.device]);
    trace.peak_in_flight[c.device] = std::max(trace.peak_in_flight[c.device], in_flight[c.device]);
  }
  return trace;
}

SimulationResult whole_run_result(RunTrace trace, const PipelineSpec& spec, int microbatch_size,
                                  const std::string& label) {
  SimulationResult result;
  result.label = label;
  result.schedule_label = label;
  result.schedule_name = label;
  result.virtual_stages = trace.layout.stages;
  result.spec = spec;
  result.batches_requested = spec.batches;
  result.simulations = 1;
  result.microbatch_size = microbatch_size;
  result.trace = std::move(trace);
  result.activation_bytes_per_microbatch.assign(result.trace.layout.devices, 0);
  // An executor cannot lengthen its run until it is steady, as the simulator does (sim/steady_state.h): with
  // N >> m an asynchronous run may still be filling when it ends, and a batch-start period taken there falls
  // below the work. So the headline figures are over the whole run:
  // throughput = samples / makespan, period = makespan / batches, bubble = 1 - busy / (devices x makespan).
  const int batches = spec.batches;
  const int m = spec.microbatches;
  const RunWindow window = RunWindow::of_batches(batches, 0, batches, m);
  result.metrics = compute_metrics(result.trace, {m, window, result.microbatch_size, 0});
  const TimeNs makespan_ns = result.trace.makespan_ns;
  double busy_ns = 0;
  for (const OpRecord& op : result.trace.ops) busy_ns += static_cast<double>(op.duration_ns());
  const double samples = static_cast<double>(m) * batches * result.microbatch_size;
  const int devices = result.trace.layout.devices;
  if (makespan_ns > 0) {
    result.metrics.period_ns = makespan_ns / batches;
    result.metrics.throughput_samples_per_s = samples / (static_cast<double>(makespan_ns) / 1e9);
    result.metrics.throughput_samples_per_gpu_s = result.metrics.throughput_samples_per_s / devices;
    result.metrics.bubble_fraction = 1 - busy_ns / (devices * static_cast<double>(makespan_ns));
  }
  if (!(result.metrics.bubble_fraction >= 0 && result.metrics.bubble_fraction < 1)) {
    throw InternalError(
        fmt::format("{}: measured bubble {} outside [0, 1) (busy {} ns on {} devices over {} ns)",
                    result.label, result.metrics.bubble_fraction, busy_ns, devices, makespan_ns));
  }
  result.drift = compute_drift(result.trace, {0, batches * m});
  return result;
}

SimulationResult measured_result(const ExecutedSchedule& run) {
  SimulationResult result = whole_run_result(
      executed_trace(run), run.spec, run.setup.samples_per_microbatch,
      run.label + (run.mode == ExecuteMode::kReal ? " (executed, real)" : " (executed, replay)"));
  result.schedule_label = run.label;
  result.schedule_name = run.label;
  result.guarantees = run.guarantees;
  std::vector<StageStaticMemory> memory(run.layout.stages);
  for (int s = 0; s < run.layout.stages; ++s) {
    if (s < static_cast<int>(run.result.final_parameters.size())) {
      memory[s].weight_bytes = static_cast<Bytes>(run.result.final_parameters[s].size() * sizeof(float));
      memory[s].gradient_bytes = memory[s].weight_bytes;
    }
    if (s < static_cast<int>(run.result.optimizer_state_bytes.size()))
      memory[s].optimizer_bytes = run.result.optimizer_state_bytes[s];
  }
  result.memory = compute_memory(result.trace, result.drift, memory);
  result.weight_memory_known = !run.result.final_parameters.empty();
  return result;
}

std::vector<TrainingStep> training_curve(const ExecutedSchedule& run) {
  const int m = run.spec.microbatches;
  const int batches = run.spec.batches;
  std::vector<TimeNs> batch_end(batches, 0);
  TimeNs origin = run.result.ops.empty() ? 0 : run.result.ops.front().start_ns;
  for (const auto& op : run.result.ops) origin = std::min(origin, op.start_ns);
  for (const auto& op : run.result.ops) {
    if (op.action.kind == OpKind::U) continue;  // U's index is a step, not a microbatch
    const int batch = op.action.microbatch / m;
    if (batch < batches) batch_end[batch] = std::max(batch_end[batch], op.end_ns - origin);
  }
  std::map<int, RunEvaluation> evaluated;
  for (const RunEvaluation& e : run.evaluations) evaluated[e.batch] = e;
  std::vector<TrainingStep> curve;
  for (int k = 0; k < batches; ++k) {
    TrainingStep step;
    step.step = k;
    step.samples = static_cast<long long>(k + 1) * m * run.setup.samples_per_microbatch;
    step.time_s = static_cast<double>(batch_end[k]) / 1e9;
    double sum = 0;
    for (int j = k * m; j < (k + 1) * m && j < static_cast<int>(run.result.losses.size()); ++j)
      sum += run.result.losses[j];
    step.train_loss = sum / m;
    if (const auto it = evaluated.find(k); it != evaluated.end()) {
      step.val_loss = it->second.loss;
      step.val_accuracy = it->second.accuracy;
    }
    curve.push_back(step);
  }
  return curve;
}

std::string training_curve_csv_header() {
  return "schedule,step,samples,time_s,clock,train_loss,val_loss,val_accuracy\n";
}

std::string training_curve_csv_rows(const ExecutedSchedule& run) {
  std::string out;
  const char* clock = run.mode == ExecuteMode::kReal ? "wall" : "virtual";
  for (const TrainingStep& s : training_curve(run)) {
    out += fmt::format("{},{},{},{:.9g},{},{:.9g},{},{}\n", csv_escape(run.label), s.step, s.samples,
                       s.time_s, clock, s.train_loss, s.val_loss ? fmt::format("{:.9g}", *s.val_loss) : "",
                       s.val_accuracy ? fmt::format("{:.9g}", *s.val_accuracy) : "");
  }
  return out;
}

}  // namespace pipesim
