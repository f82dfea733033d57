#include "api/simulation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "analysis/streaming_analysis.h"
#include "api/engine_error_location.h"
#include "api/resolve.h"
#include "api/run_assertions.h"
#include "api/unmodelled_check.h"
#include "base/errors.h"
#include "cost_models/chunk_layers.h"
#include "cost_models/pipeline_copies_costs.h"
#include "cost_models/transformer/shapes_flops.h"
#include "report/model_choices.h"
#include "schedules/registry.h"
#include "sim/engine/engine.h"
#include "sim/fast/repeated_list_stream.h"

namespace pipesim {

namespace {

// The run's identity and shape, before anything is simulated.
SimulationResult result_header(const ResolvedRun& run, const ScheduleRequest& request) {
  const Scenario& scenario = run.scenario;
  SimulationResult result;
  result.label = run.label;
  result.schedule_label = run.schedule->label();
  result.schedule_name = request.name;
  result.schedule_params = request.params.resolved();
  result.virtual_stages = run.layout.stages;
  result.spec = run.spec;
  result.microbatch_size = scenario.samples_per_microbatch();
  result.microbatch_size_text = microbatch_size_text(scenario);
  result.seq_len = scenario.seq_len;
  result.batches_requested = scenario.batches;
  return result;
}

// What the steady-state search needs to know of the run.
RunLengthOptions run_length(const ResolvedRun& run, const SimulationOptions& options,
                            SimulationResult& result) {
  RunLengthOptions length;
  length.microbatches_per_batch = run.scenario.microbatches;
  length.min_batches = run.scenario.batches;
  length.hint = run.schedule->steady_state(result.spec);
  length.exact_repeat = !options.decorate_costs;
  result.spec.exact_costs = length.exact_repeat;
  length.fixed_length = options.fixed_batches;
  length.run_name = run_name(result);
  return length;
}

// Recorded: every op kept, the figures computed from the trace (and the task graph when asked).
void simulate_recorded(const ResolvedRun& run, const ScheduleRequest& request,
                       const SimulationOptions& options, const CostModel& costs,
                       const RunLengthOptions& length, SimulationResult& result) {
  const Scenario& scenario = run.scenario;
  SteadyRun steady =
      with_engine_errors_located(request.params.where(), result.label, scenario.microbatches, [&] {
        return simulate_steady_state(length, [&](int batches) {
          result.spec.batches = batches;
          ExecutionPlan plan = run.schedule->plan(result.spec, costs);
          return simulate(plan, costs, *run.make_comm());
        });
      });
  result.trace = std::move(steady.trace);
  result.spec.batches = steady.window.total_batches;
  result.simulations = steady.simulations;
  if (options.analyze_graph) {
    result.graph = analyze_task_graph(result.trace);
    // Two computations of one figure: the Boost graph's longest path and the engine's inline one.
    if (result.graph.critical_path_ns != result.trace.critical_path_ns) {
      throw ScheduleError(fmt::format("{}: the task graph's critical path is {} ns, the engine's {} ns",
                                      result.label, result.graph.critical_path_ns,
                                      result.trace.critical_path_ns));
    }
  } else {
    result.graph.critical_path_ns = result.trace.critical_path_ns;
    result.graph.critical_path = result.trace.critical_path;
  }
  const MetricsInput input{scenario.microbatches, steady.window, scenario.samples_per_microbatch(),
                           scenario.seq_len};
  result.metrics = compute_metrics(result.trace, input);
  result.drift = compute_drift(result.trace, {steady.window.first_microbatch, steady.window.end_microbatch});
  result.memory = compute_memory(result.trace, result.drift, run.static_memory);
}

// Streamed: the figures computed while the run goes (analysis/streaming_analysis.h), in flat memory.
void simulate_streamed(const ResolvedRun& run, const ScheduleRequest& request,
                       const SimulationOptions& options, const CostModel& costs,
                       const RunLengthOptions& length, SimulationResult& result) {
  const Scenario& scenario = run.scenario;
  const PipelineLayout& layout = run.layout;
  std::optional<StreamingAnalysis> analysis;
  const SteadyWindow steady =
      with_engine_errors_located(request.params.where(), result.label, scenario.microbatches, [&] {
        return find_steady_window(length, [&](const RunWindow& window) -> const SteadyStateProbe& {
          result.spec.batches = window.total_batches;
          ExecutionPlan plan = run.schedule->plan(result.spec, costs);
          analysis.emplace(StreamingConfig{layout, scenario.microbatches, window, plan.total_microbatches,
                                           run.static_memory});
          const std::unique_ptr<CommModel> comm = run.make_comm();
          // Static lists under fixed latencies: the same stream from one timing pass, no event loop.
          std::optional<RunTrace> streamed =
              options.event_engine ? std::nullopt : stream_repeated_lists(plan, costs, *comm, *analysis);
          if (!streamed) {
            analysis.emplace(StreamingConfig{layout, scenario.microbatches, window, plan.total_microbatches,
                                             run.static_memory});
            streamed = simulate(plan, costs, *comm, *analysis);
          }
          result.trace = std::move(*streamed);
          return *analysis;
        });
      });
  result.spec.batches = steady.window.total_batches;
  result.simulations = steady.simulations;
  result.graph.critical_path_ns = result.trace.critical_path_ns;
  const MetricsInput input{scenario.microbatches, steady.window, scenario.samples_per_microbatch(),
                           scenario.seq_len};
  result.metrics = analysis->metrics(input, result.trace);
  result.drift =
      analysis->drift({steady.window.first_microbatch, steady.window.end_microbatch}, result.trace);
  result.memory = analysis->memory();
}

// A transformer's per-GPU figures (a pipeline device is a group of t x c GPUs, tensor and context parallel:
// the per-GPU figures divide by them too), its FLOPs and peak for MFU, and the choices behind them in words.
void add_transformer_figures(const Scenario& scenario, const PipelineLayout& layout,
                             SimulationResult& result) {
  const TransformerSetup& t = *scenario.transformer;
  result.model_flops_per_sample = model_flops_per_sample(t.model);
  const auto peak = t.profile.peak_tflops.find(t.model.dtype);
  if (peak != t.profile.peak_tflops.end()) result.peak_flops_per_device = peak->second * 1e12;
  result.gpus_per_device = t.parallel.gpus_per_pipeline_rank();
  result.metrics.throughput_samples_per_gpu_s /= result.gpus_per_device;
  const std::vector<int> nodes = pipeline_device_nodes(scenario, layout.devices);
  const size_t node_count = nodes.empty() ? 0 : std::set<int>(nodes.begin(), nodes.end()).size();
  result.model_choices = run_model_choices_text(t, result.spec.devices, node_count);
  result.profile_kind = name_in(profile_kind_names(), t.profile.kind);
  result.unmodelled = unmodelled_lines(unmodelled_features(scenario));
}

}  // namespace

SimulationResult simulate_schedule(const Scenario& scenario_as_given, const ScheduleRequest& request,
                                   const SimulationOptions& options) {
  ResolveOptions checks;
  checks.task_graph = options.analyze_graph;
  checks.records = options.keep_trace || options.analyze_graph;
  checks.fixed_batches = options.fixed_batches;
  checks.limits = options.limits;
  ResolvedRun run = resolve(scenario_as_given, request, checks);
  const Scenario& scenario = run.scenario;
  const PipelineLayout& layout = run.layout;
  SimulationResult result = result_header(run, request);
  std::unique_ptr<CostModel> costs = std::move(run.costs);
  if (options.decorate_costs) costs = options.decorate_costs(std::move(costs));
  result.activation_bytes_per_microbatch.assign(layout.devices, 0);
  for (int stage = 0; stage < layout.stages; ++stage) {
    result.activation_bytes_per_microbatch[layout.device(stage)] += costs->activation_bytes(stage);
  }
  const RunLengthOptions length = run_length(run, options, result);
  if (options.keep_trace || options.analyze_graph) {
    simulate_recorded(run, request, options, *costs, length, result);
  } else {
    simulate_streamed(run, request, options, *costs, length, result);
  }
  result.guarantees = run.schedule->guarantees(result.spec);
  result.weight_memory_known = scenario.transformer || std::any_of(scenario.costs.parameter_bytes.begin(),
                                                                   scenario.costs.parameter_bytes.end(),
                                                                   [](Bytes b) { return b > 0; });
  result.memory_capacity_bytes = run.memory_capacity_bytes;
  if (scenario.transformer) add_transformer_figures(scenario, layout, result);
  assert_physical(result, length.exact_repeat);
  return result;
}

std::vector<ScheduleRequest> requested_schedules(const Scenario& scenario) {
  if (!scenario.schedules.empty()) return scenario.schedules;
  std::vector<ScheduleRequest> all;
  for (const ScheduleInfo& info : registered_schedules()) {
    all.push_back({info.name, ScheduleParams(scenario.source)});
  }
  return all;
}

}  // namespace pipesim
