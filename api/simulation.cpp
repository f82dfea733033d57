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
  std::unique_ptr<CostModel> costs = std::move(run.costs);
  if (options.decorate_costs) costs = options.decorate_costs(std::move(costs));
  result.activation_bytes_per_microbatch.assign(layout.devices, 0);
  for (int stage = 0; stage < layout.stages; ++stage) {
    result.activation_bytes_per_microbatch[layout.device(stage)] += costs->activation_bytes(stage);
  }
  result.batches_requested = scenario.batches;
  RunLengthOptions length;
  length.microbatches_per_batch = scenario.microbatches;
  length.min_batches = scenario.batches;
  length.hint = run.schedule->steady_state(result.spec);
  length.exact_repeat = !options.decorate_costs;
  result.spec.exact_costs = length.exact_repeat;
  length.fixed_length = options.fixed_batches;
  length.run_name = run_name(result);
  const MetricsInput metrics_input{
      scenario.microbatches, {}, scenario.samples_per_microbatch(), scenario.seq_len};
  if (options.keep_trace || options.analyze_graph) {
    SteadyRun steady =
        with_engine_errors_located(request.params.where(), result.label, scenario.microbatches, [&] {
          return simulate_steady_state(length, [&](int batches) {
            result.spec.batches = batches;
            ExecutionPlan plan = run.schedule->plan(result.spec, *costs);
            return simulate(plan, *costs, *run.make_comm());
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
    MetricsInput input = metrics_input;
    input.window = steady.window;
    result.metrics = compute_metrics(result.trace, input);
    result.drift =
        compute_drift(result.trace, {steady.window.first_microbatch, steady.window.end_microbatch});
    result.memory = compute_memory(result.trace, result.drift, run.static_memory);
  } else {
    std::optional<StreamingAnalysis> analysis;
    const SteadyWindow steady =
        with_engine_errors_located(request.params.where(), result.label, scenario.microbatches, [&] {
          return find_steady_window(length, [&](const RunWindow& window) -> const SteadyStateProbe& {
            result.spec.batches = window.total_batches;
            ExecutionPlan plan = run.schedule->plan(result.spec, *costs);
            analysis.emplace(StreamingConfig{layout, scenario.microbatches, window, plan.total_microbatches,
                                             run.static_memory});
            const std::unique_ptr<CommModel> comm = run.make_comm();
            // Static lists under fixed latencies: the same stream from one timing pass, no event loop.
            std::optional<RunTrace> streamed =
                options.event_engine ? std::nullopt : stream_repeated_lists(plan, *costs, *comm, *analysis);
            if (!streamed) {
              analysis.emplace(StreamingConfig{layout, scenario.microbatches, window, plan.total_microbatches,
                                               run.static_memory});
              streamed = simulate(plan, *costs, *comm, *analysis);
            }
            result.trace = std::move(*streamed);
            return *analysis;
          });
        });
    result.spec.batches = steady.window.total_batches;
    result.simulations = steady.simulations;
    result.graph.critical_path_ns = result.trace.critical_path_ns;
    MetricsInput input = metrics_input;
    input.window = steady.window;
    result.metrics = analysis->metrics(input, result.trace);
    result.drift =
        analysis->drift({steady.window.first_microbatch, steady.window.end_microbatch}, result.trace);
    result.memory = analysis->memory();
  }
  result.guarantees = run.schedule->guarantees(result.spec);
  result.weight_memory_known = scenario.transformer || std::any_of(scenario.costs.parameter_bytes.begin(),
                                                                   scenario.costs.parameter_bytes.end(),
                                                                   [](Bytes b) { return b > 0; });
  result.memory_capacity_bytes = run.memory_capacity_bytes;
  if (scenario.transformer) {
    const TransformerSetup& t = *scenario.transformer;
    result.model_flops_per_sample = model_flops_per_sample(t.model);
    const auto peak = t.profile.peak_tflops.find(t.model.dtype);
    if (peak != t.profile.peak_tflops.end()) result.peak_flops_per_device = peak->second * 1e12;
    // A pipeline device is a group of t x c GPUs (tensor and context parallel): the per-GPU figures divide by
    // them too.
    result.gpus_per_device = t.parallel.gpus_per_pipeline_rank();
    result.metrics.throughput_samples_per_gpu_s /= result.gpus_per_device;
    result.model_choices = fmt::format("{}", model_choices_text(t.model));
    if (const OpTimeScale& scale = t.profile.op_time_scale; scale.scaled()) {
      result.model_choices +=
          fmt::format("; op times scaled F x{:.3g}, I x{:.3g}, W x{:.3g} ({})", scale.forward,
                      scale.backward_input, scale.backward_weight, scale.source);
    }
    const ParallelConfig& p = t.parallel;
    if (p.any()) {
      result.model_choices += fmt::format(
          "; job: tensor parallel {}{}{}, data parallel {}{}, {} GPUs ({} per node, ranks {}); a device is a "
          "pipeline rank of {} GPU{}: samples/s and tokens/s are one pipeline replica's (the job's: x {}), "
          "memory per GPU, MFU per GPU",
          p.tensor, p.sequence_parallel ? " with sequence parallelism" : "",
          p.context > 1 ? fmt::format(", context parallel {} (ring attention)", p.context) : "", p.data,
          p.zero > 0 ? fmt::format(" with ZeRO-{} over {} ranks", p.zero, p.weight_replicas()) : "",
          p.gpus_per_pipeline_rank() * p.data * result.spec.devices, p.gpus_per_node,
          p.pipeline_before_data ? "tp-pp-dp" : "tp-dp-pp", p.gpus_per_pipeline_rank(),
          p.gpus_per_pipeline_rank() > 1 ? "s" : "", p.data);
    }
    const std::vector<int> nodes = pipeline_device_nodes(scenario, layout.devices);
    if (!nodes.empty()) {
      result.model_choices +=
          fmt::format("; pipeline ranks on {} nodes: transfers between them on the profile's inter-node link",
                      std::set<int>(nodes.begin(), nodes.end()).size());
    }
    result.model_choices += fmt::format("; hardware profile {} ({})", t.profile.name, t.profile.kind_text());
    result.profile_kind = name_in(profile_kind_names(), t.profile.kind);
    result.unmodelled = unmodelled_lines(unmodelled_features(scenario));
    if (t.profile.memory_capacity_gb > 0) {
      result.model_choices +=
          fmt::format(", {:.2f} GiB usable per device", t.profile.usable_memory_bytes() / kBytesPerGiB);
    }
    if (t.profile.fit.fitted()) result.model_choices += ", with its fit to measured times";
  }
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
