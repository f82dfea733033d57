#include "train/validate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "api/resolve.h"
#include "api/simulation.h"
#include "base/errors.h"
#include "calibrate/cpu_calibrate.h"
#include "executor/costs/cpu_profile_costs.h"
#include "executor/costs/measured_costs.h"
#include "executor/real_executor.h"
#include "executor/replay_executor.h"
#include "schedules/registry.h"
#include "sim/engine/engine.h"
#include "train/execution_report.h"

namespace pipesim {
namespace {

// Durations from one model, activation bytes per microbatch measured by the run, transfers from another.
class MeasuredMemoryCosts final : public CostModel {
 public:
  MeasuredMemoryCosts(const CostModel& durations, const CostModel& transfers, std::vector<Bytes> activation,
                      std::vector<Bytes> weight_grad_activation)
      : durations_(durations),
        transfers_(transfers),
        activation_(std::move(activation)),
        weight_grad_activation_(std::move(weight_grad_activation)) {}
  TimeNs duration(const Action& a) const override { return durations_.duration(a); }
  Bytes activation_bytes(int stage) const override { return activation_[stage]; }
  Bytes weight_grad_activation_bytes(int stage) const override { return weight_grad_activation_[stage]; }
  Bytes transfer_bytes(int stage) const override { return transfers_.transfer_bytes(stage); }

 private:
  const CostModel& durations_;
  const CostModel& transfers_;
  std::vector<Bytes> activation_;
  std::vector<Bytes> weight_grad_activation_;
};

// The metrics validate compares, from the one analysis of a whole run (train/execution_report.h) that the
// executed run and the engine's prediction of it both go through.
MeasuredMetrics metrics_of(const SimulationResult& run) {
  MeasuredMetrics m;
  m.makespan_ms = static_cast<double>(run.trace.makespan_ns) / 1e6;
  m.throughput_samples_per_s = run.metrics.throughput_samples_per_s;
  m.bubble = run.trace.ops.empty() ? 0 : run.metrics.bubble_fraction;
  for (const StageDrift& stage : run.drift.stages) m.max_drift_per_stage.push_back(stage.drift_max);
  for (int q : run.trace.peak_in_flight) m.peak_in_flight = std::max(m.peak_in_flight, q);
  for (Bytes b : run.trace.peak_activation_bytes)
    m.peak_activation_bytes = std::max(m.peak_activation_bytes, b);
  return m;
}

DriftPerMicrobatch drift_per_microbatch(const SimulationResult& run) {
  DriftPerMicrobatch drift;
  for (int s = 0; s < static_cast<int>(run.drift.stages.size()); ++s) {
    const std::vector<int>& per_microbatch = run.drift.stages[s].drift;
    for (int j = 0; j < static_cast<int>(per_microbatch.size()); ++j)
      if (per_microbatch[j] >= 0) drift[{s, j}] = per_microbatch[j];
  }
  return drift;
}

TimeNs median(std::vector<TimeNs> v) {
  if (v.empty()) return 0;
  const auto middle = v.begin() + static_cast<std::ptrdiff_t>((v.size() - 1) / 2);
  std::nth_element(v.begin(), middle, v.end());
  return *middle;
}

// Per stage, the median change of its device's live activation bytes over its F (what a microbatch saves)
// and over its W (what the weight gradient held).
void measured_activation_bytes(const std::vector<executor::ExecutedOp>& ops_in_start_order, int devices,
                               int stages, std::vector<Bytes>& activation, std::vector<Bytes>& weight_grad) {
  std::vector<Bytes> live(devices, 0);
  std::vector<std::vector<TimeNs>> f_bytes(stages), w_bytes(stages);
  std::vector<std::vector<executor::ExecutedOp>> per_device(devices);
  for (const auto& op : ops_in_start_order) per_device[op.device].push_back(op);
  for (int d = 0; d < devices; ++d) {
    Bytes before = 0;
    for (const auto& op : per_device[d]) {
      if (op.action.kind == OpKind::F) f_bytes[op.action.stage].push_back(op.live_activation_bytes - before);
      if (op.action.kind == OpKind::W) w_bytes[op.action.stage].push_back(before - op.live_activation_bytes);
      before = op.live_activation_bytes;
    }
  }
  activation.resize(stages);
  weight_grad.resize(stages);
  for (int s = 0; s < stages; ++s) {
    activation[s] = median(f_bytes[s]);
    weight_grad[s] = median(w_bytes[s]);
  }
}

// Per stage: the microbatch gradients one of its U sums, from the schedule's run in the simulator (the
// gradient ops of the stage's model piece, over all copies, per U of the stage): m for a schedule that steps
// once per batch, 1 for one that steps per microbatch.
template <typename FreshPlan>
std::vector<double> gradients_per_update(const FreshPlan& fresh_plan, const CostModel& costs,
                                         const Scenario& scenario, const PipelineLayout& layout) {
  const std::unique_ptr<CommModel> comm = make_comm_model(scenario, layout);
  ExecutionPlan plan = fresh_plan();
  const RunTrace trace = simulate(plan, costs, *comm);
  std::vector<double> gradients(layout.stages_per_pipeline(), 0), updates(layout.stages, 0);
  for (const OpRecord& op : trace.ops) {
    if (op.action.kind == OpKind::B || op.action.kind == OpKind::W)
      ++gradients[layout.model_stage(op.action.stage)];
    if (op.action.kind == OpKind::U) ++updates[op.action.stage];
  }
  std::vector<double> per_update(layout.stages, 1);
  for (int s = 0; s < layout.stages; ++s) {
    if (updates[s] > 0) per_update[s] = gradients[layout.model_stage(s)] / updates[s];
  }
  return per_update;
}

}  // namespace

double drift_agreement(const DriftPerMicrobatch& predicted, const DriftPerMicrobatch& measured) {
  std::size_t pairs = predicted.size(), agreeing = 0;
  for (const auto& [key, drift] : measured) {
    const auto it = predicted.find(key);
    if (it == predicted.end())
      ++pairs;
    else if (it->second == drift)
      ++agreeing;
  }
  return pairs == 0 ? 1.0 : static_cast<double>(agreeing) / static_cast<double>(pairs);
}

std::vector<OpTimeComparison> compare_op_times(const std::vector<executor::ExecutedOp>& ops,
                                               const CostModel& costs, bool real_mode) {
  struct Sums {
    int count = 0;
    double wall_ns = 0, cpu_ns = 0, predicted_ns = 0, overhead_ns = 0;
  };
  std::map<std::pair<int, int>, Sums> sums;
  for (const auto& op : ops) {
    Sums& s = sums[{op.action.stage, static_cast<int>(op.action.kind)}];
    ++s.count;
    s.wall_ns += static_cast<double>(op.end_ns - op.start_ns);
    s.cpu_ns += static_cast<double>(op.thread_cpu_ns);
    s.predicted_ns += static_cast<double>(costs.duration(op.action));
    s.overhead_ns += static_cast<double>(op.overhead_ns);
  }
  std::vector<OpTimeComparison> out;
  for (const auto& [key, s] : sums) {
    OpTimeComparison c;
    c.stage = key.first;
    c.kind = static_cast<OpKind>(key.second);
    c.count = s.count;
    c.measured_mean_ms = s.wall_ns / s.count / 1e6;
    c.predicted_mean_ms = s.predicted_ns / s.count / 1e6;
    c.overhead_mean_ms = s.overhead_ns / s.count / 1e6;
    c.preempted_share = real_mode && s.wall_ns > 0 ? std::max(0.0, 1 - s.cpu_ns / s.wall_ns) : 0;
    out.push_back(c);
  }
  return out;
}

double preempted_share(const std::vector<executor::ExecutedOp>& ops) {
  double wall_ns = 0, cpu_ns = 0;
  for (const auto& op : ops) {
    wall_ns += static_cast<double>(op.end_ns - op.start_ns);
    cpu_ns += static_cast<double>(op.thread_cpu_ns);
  }
  return wall_ns > 0 ? std::max(0.0, 1 - cpu_ns / wall_ns) : 0;
}

ScheduleValidation validate_schedule_median(const Scenario& scenario, const ScheduleRequest& request,
                                            const ValidationOptions& options, const HardwareProfile& profile,
                                            int runs) {
  std::vector<ScheduleValidation> all;
  for (int i = 0; i < std::max(1, runs); ++i)
    all.push_back(validate_schedule(scenario, request, options, profile));
  std::sort(all.begin(), all.end(), [](const ScheduleValidation& a, const ScheduleValidation& b) {
    return a.measured.makespan_ms < b.measured.makespan_ms;
  });
  ScheduleValidation median = all[(all.size() - 1) / 2];
  median.runs = static_cast<int>(all.size());
  median.makespan_spread =
      median.measured.makespan_ms > 0
          ? (all.back().measured.makespan_ms - all.front().measured.makespan_ms) / median.measured.makespan_ms
          : 0;
  return median;
}

std::vector<std::string> profile_mismatches(const HardwareProfile& profile) {
  std::vector<std::string> out;
  if (profile.device_kind != "cpu") {
    out.push_back(fmt::format("{} describes a {} ({}), not this CPU", profile.source, profile.device_kind,
                              profile.device_name));
    return out;
  }
  const std::string here = this_cpu_model();
  if (profile.device_name != here) {
    out.push_back(fmt::format("{} describes '{}' (host {}, {}); this machine is '{}'", profile.source,
                              profile.device_name, profile.provenance.at("host"),
                              profile.provenance.at("date"), here));
  }
  const std::string flags = this_cpu_vector_flags();
  const std::string& driver = profile.provenance.at("driver");
  const auto at = driver.find("vector flags: ");
  if (at == std::string::npos) {
    out.push_back(
        fmt::format("{} records no vector extensions (calibrated before pipesim recorded them), so "
                    "nothing says it is this CPU's",
                    profile.source));
  } else if (driver.compare(at + 14, flags.size(), flags) != 0) {
    out.push_back(fmt::format("{} was measured with other vector extensions ({}); this CPU has {}",
                              profile.source, driver.substr(at + 14, driver.find(',', at) - at - 14), flags));
  }
  return out;
}

double ValidationReport::worst_preempted_share() const {
  double worst = 0;
  for (const ScheduleValidation& v : schedules) worst = std::max(worst, v.preempted_share);
  return worst;
}

double percent_error(double predicted, double measured) {
  if (measured == 0) return predicted == 0 ? 0 : 100;
  return 100 * std::abs(predicted - measured) / std::abs(measured);
}

ScheduleValidation validate_schedule(const Scenario& scenario_as_given, const ScheduleRequest& request,
                                     const ValidationOptions& options, const HardwareProfile& profile) {
  // The run the simulator would build (api/resolve.h); the executor measures its own costs, so the
  // scenario's are not checked for I, W or M_W.
  ResolveOptions resolve_options;
  resolve_options.check = false;
  resolve_options.task_graph = false;
  resolve_options.limits = options.limits;
  const ResolvedRun resolved = resolve(scenario_as_given, request, resolve_options);
  const Scenario& scenario = resolved.scenario;
  const std::unique_ptr<Schedule>& schedule = resolved.schedule;
  const PipelineSpec& spec = resolved.spec;
  schedule->check(spec);
  const PipelineLayout& layout = resolved.layout;
  const executor::TrainingSetup setup = training_setup_for(options.setup, scenario, layout);
  const std::unique_ptr<CostModel>& scenario_costs = resolved.costs;
  const auto fresh_plan = [&] { return schedule->plan(spec, *scenario_costs); };

  ScheduleValidation v;
  v.schedule = schedule->label();
  // The real run when every device has a core of its own; otherwise replay. Replay's per-device virtual
  // clocks advance by each op's own cost (not a mean: the fitted prediction below uses means, and must not
  // see itself), measured by a first pass that runs every op alone on one thread in the scenario clock's
  // order: an unpinned run of more workers than cores would measure the contention of threads sharing a
  // core, which no pipeline device has.
  executor::ExecutionResult run;
  if (static_cast<std::size_t>(layout.devices) <= executor::allowed_cores().size()) {
    executor::ThreadsTransport transport(layout.devices);
    ExecutionPlan real_plan = fresh_plan();
    run = executor::execute_real(real_plan, setup, transport);
  }
  v.mode = run.timing_valid && !run.ops.empty() ? "real" : "replay";
  if (v.mode == "replay") {
    const std::unique_ptr<CommModel> measuring_comm = resolved.make_comm();
    ExecutionPlan measuring_plan = fresh_plan();
    const executor::ExecutionResult measuring =
        executor::execute_replay(measuring_plan, *scenario_costs, *measuring_comm, setup);
    const executor::PerOpCostModel cpu_costs(measuring.ops, layout.stages, *scenario_costs);
    const std::unique_ptr<CommModel> comm = resolved.make_comm();
    ExecutionPlan replay_plan = fresh_plan();
    run = executor::execute_replay(replay_plan, cpu_costs, *comm, setup);
  }
  ExecutedSchedule executed;
  executed.label = v.schedule;
  executed.mode = v.mode == "real" ? ExecuteMode::kReal : ExecuteMode::kReplay;
  executed.spec = spec;
  executed.virtual_stages = layout.stages;
  executed.layout = layout;
  executed.setup = setup;
  executed.result = run;
  const SimulationResult measured = measured_result(executed);
  v.measured = metrics_of(measured);

  std::vector<Bytes> activation, weight_grad;
  measured_activation_bytes(run.ops, layout.devices, layout.stages, activation, weight_grad);
  const auto predict = [&](const CostModel& durations, MeasuredMetrics& out) {
    const MeasuredMemoryCosts costs(durations, *scenario_costs, activation, weight_grad);
    const std::unique_ptr<CommModel> comm = make_comm_model(scenario, layout);
    ExecutionPlan plan = fresh_plan();
    const SimulationResult predicted =
        whole_run_result(simulate(plan, costs, *comm), spec, setup.samples_per_microbatch, v.schedule);
    out = metrics_of(predicted);
    return drift_per_microbatch(predicted);
  };
  const executor::ResampledCostModel fitted(run.ops, layout.stages, *scenario_costs);
  const auto predicted_drift = predict(fitted, v.fitted);
  predict(executor::MeasuredCostModel(run.ops, layout.stages, *scenario_costs), v.fitted_means);
  const auto measured_drift = drift_per_microbatch(measured);
  v.drift_exact = predicted_drift == measured_drift;
  v.drift_agreement = drift_agreement(predicted_drift, measured_drift);
  const CpuProfileCosts cpu(profile, setup, layout.stages,
                            gradients_per_update(fresh_plan, *scenario_costs, scenario, layout),
                            v.mode == "real", options.cost_model_time_scale);
  v.cost_model_missing = cpu.missing_terms();
  predict(cpu, v.cost_model);
  v.op_times = compare_op_times(run.ops, cpu, v.mode == "real");
  v.preempted_share = v.mode == "real" ? preempted_share(run.ops) : 0;
  return v;
}

}  // namespace pipesim
