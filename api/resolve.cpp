#include "api/resolve.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "api/unmodelled_check.h"
#include "base/errors.h"
#include "base/value_ranges.h"
#include "cost_models/chunk_layers.h"
#include "cost_models/explicit_costs.h"
#include "cost_models/pipeline_copies_costs.h"
#include "cost_models/transformer/cost_model.h"
#include "cost_models/transformer/job_topology.h"
#include "cost_models/transformer/stage_costs.h"
#include "cost_models/uneven_microbatch_costs.h"
#include "schedules/registry.h"
#include "sim/resource_estimate.h"
#include "sim/steady_state.h"
#include "spec/hardware_profile.h"

namespace pipesim {
namespace {

// The effective pipeline as the resource estimate sees it: overrides, chunks and a CSV's sizes applied.
RunShape run_shape(const Scenario& scenario, const Schedule& schedule, const PipelineSpec& spec,
                   const PipelineLayout& layout, const ResolveOptions& options) {
  RunShape shape{layout.devices,        layout.stages,
                 scenario.microbatches, spec.batches,
                 options.task_graph,    scenario.comm.model == CommSpec::Model::kLink,
                 options.records,       0};
  if (!options.fixed_batches) {
    // The steady-state search runs past the warm-up and measures at least two windows before the drain.
    const SteadyStateHint hint = schedule.steady_state(spec);
    shape.steady_microbatches = static_cast<double>(hint.warmup_microbatches) +
                                2.0 * hint.cycle_microbatches + hint.drain_microbatches;
  }
  return shape;
}

void check_run(const ResolvedRun& run, const ScheduleRequest& request, const ResolveOptions& options) {
  const Scenario& scenario = run.scenario;
  try {
    run.schedule->check(run.spec);
    // Before anything is sized by the run.
    check_resources(run_shape(scenario, *run.schedule, run.spec, run.layout, options), run.label,
                    options.limits);
    if (scenario.transformer) {
      // Each copy of the model is split alone (a bidirectional layout's devices hold one stage of each).
      check_equal_chunk_layers(scenario.transformer->model.layers, scenario.transformer->split,
                               run.layout.first_pipeline());
    }
  } catch (const ResourceLimitError& e) {
    throw ResourceLimitError(fmt::format("{}: {}", request.params.where(), e.what()));
  } catch (const InputError& e) {
    // Say where the schedule was requested: the file, line and key.
    throw InputError(fmt::format("{}: {}", request.params.where(), e.what()));
  }
  if (run.schedule->splits_backward() && !scenario.backward_split_given) {
    throw InputError(
        fmt::format("{}: schedule '{}' splits the backward into I and W, so costs need "
                    "backward_input_ms and backward_weight_ms (not backward_ms)",
                    request.params.where(), run.label));
  }
  if (run.schedule->plans_under_memory_limit() && !scenario.weight_grad_memory_missing_where.empty()) {
    throw InputError(fmt::format(
        "{}: missing; schedule '{}' (requested at {}) orders I and W under an activation-memory "
        "limit, so the costs must state M_W, the bytes per microbatch that W still holds after I (0 up to "
        "activation_bytes; 32*s*b*h per transformer layer in 16-bit, the Zero Bubble paper's figure)",
        scenario.weight_grad_memory_missing_where, run.label, request.params.where()));
  }
}

}  // namespace

std::vector<int> pipeline_device_nodes(const Scenario& scenario, int devices) {
  if (!scenario.transformer || !scenario.comm.from_profile || scenario.comm.model != CommSpec::Model::kLink) {
    return {};
  }
  const TransformerSetup& t = *scenario.transformer;
  if (!t.profile.inter_node_link || t.parallel.gpus_per_node < 1) return {};
  const ParallelDegrees degrees{t.parallel.tensor, t.parallel.context, t.parallel.data, devices};
  const RankOrder order = t.parallel.pipeline_before_data ? RankOrder::kTensorContextPipelineData
                                                          : RankOrder::kTensorContextDataPipeline;
  std::vector<int> nodes(devices);
  for (int device = 0; device < devices; ++device) {
    nodes[device] = rank_at({0, 0, 0, device}, degrees, order) / t.parallel.gpus_per_node;
  }
  if (std::all_of(nodes.begin(), nodes.end(), [&](int n) { return n == nodes.front(); })) return {};
  return nodes;
}

std::unique_ptr<CostModel> make_cost_model(const Scenario& scenario, const PipelineLayout& layout,
                                           const Limits& limits) {
  if (layout.pipelines > 1) {
    return std::make_unique<PipelineCopiesCostModel>(
        make_cost_model(scenario, layout.first_pipeline(), limits), layout);
  }
  if (scenario.transformer) {
    const UnevenSplit split = uneven_split(scenario);
    if (split.larger_count > 0) {
      // Whole samples per microbatch: each op priced at its own microbatch's size, on one split of the
      // model (a balanced split is found for the larger microbatches).
      TransformerSetup setup = *scenario.transformer;
      if (setup.split == LayerSplit::kBalanced && setup.balanced_unit_starts.empty())
        setup.balanced_unit_starts = balanced_unit_starts(setup, split.smaller + 1.0, layout.stages, limits);
      return std::make_unique<UnevenMicrobatchCostModel>(
          std::make_unique<TransformerCostModel>(setup, split.smaller + 1.0, layout, limits),
          std::make_unique<TransformerCostModel>(setup, split.smaller, layout, limits), split.larger_count,
          scenario.microbatches);
    }
    return std::make_unique<TransformerCostModel>(*scenario.transformer, scenario.samples_per_microbatch(),
                                                  layout, limits);
  }
  return std::make_unique<ExplicitCostModel>(scenario.costs, layout);
}

namespace {

std::optional<LinkSpec> inter_node_link_of(const Scenario& scenario) {
  return scenario.transformer ? scenario.transformer->profile.inter_node_link : std::nullopt;
}

std::unique_ptr<CommModel> comm_timing_of(const CommSpec& comm, int devices, const std::vector<int>& nodes,
                                          const std::optional<LinkSpec>& inter_node) {
  if (comm.model == CommSpec::Model::kLink) {
    auto link = std::make_unique<LinkComm>(devices, comm.bandwidth_bytes_per_ns, comm.latency_ns.at(0));
    if (!nodes.empty() && inter_node) {
      link->set_inter_node_link(nodes, inter_node->bandwidth_gb_per_s,
                                static_cast<TimeNs>(std::llround(inter_node->latency_us * 1e3)));
    }
    return link;
  }
  return std::make_unique<FixedLatencyComm>(comm.latency_ns);
}

std::unique_ptr<CommModel> comm_model_of(const CommSpec& comm, int devices,
                                         const std::vector<int>& nodes = {},
                                         const std::optional<LinkSpec>& inter_node = std::nullopt) {
  std::unique_ptr<CommModel> timing = comm_timing_of(comm, devices, nodes, inter_node);
  if (comm.blocking) return std::make_unique<BlockingComm>(std::move(timing));
  return timing;
}

}  // namespace

std::unique_ptr<CommModel> make_comm_model(const Scenario& scenario, const PipelineLayout& layout) {
  return comm_model_of(scenario.comm, layout.devices, pipeline_device_nodes(scenario, layout.devices),
                       inter_node_link_of(scenario));
}

std::vector<StageStaticMemory> static_memory(const Scenario& scenario, const PipelineLayout& layout,
                                             const Limits& limits) {
  if (layout.pipelines > 1) {
    // Every copy holds its own weights, gradients and optimizer state (DualPipe's two copies per device).
    const std::vector<StageStaticMemory> first = static_memory(scenario, layout.first_pipeline(), limits);
    std::vector<StageStaticMemory> stages;
    for (int stage = 0; stage < layout.stages; ++stage) stages.push_back(first[layout.model_stage(stage)]);
    return stages;
  }
  if (scenario.transformer) {
    std::vector<StageStaticMemory> stages;
    // With uneven microbatches the larger one's working memory (an upper bound, as its activations).
    const UnevenSplit split = uneven_split(scenario);
    const double b = split.larger_count > 0 ? split.smaller + 1.0 : scenario.samples_per_microbatch();
    for (const StageCosts& c : transformer_stage_costs(*scenario.transformer, b, layout.stages, limits)) {
      stages.push_back({computed_bytes(c.parameter_bytes, "a stage's weights"),
                        computed_bytes(c.gradient_bytes, "a stage's gradients"),
                        computed_bytes(c.optimizer_bytes, "a stage's optimizer state"),
                        computed_bytes(c.recompute_working_bytes, "a stage's recomputation working memory")});
    }
    return stages;
  }
  std::vector<StageStaticMemory> stages(layout.stages);
  if (scenario.costs.parameter_bytes.empty()) return stages;  // built in code without weights
  for (int stage = 0; stage < layout.stages; ++stage) {
    stages[stage].weight_bytes =
        scenario.costs.parameter_bytes[layout.device(stage)] / layout.chunks_per_device;
  }
  return stages;
}

PipelineSpec pipeline_spec_for(const Scenario& scenario, const Schedule& schedule) {
  PipelineSpec spec;
  spec.devices = scenario.stages;
  spec.microbatches = scenario.microbatches;
  spec.batches = scenario.batches;
  // Asynchronous schedules never flush, so the scenario's optimizer synchronisation does not apply to them.
  spec.sync = schedule.default_sync() == OptimizerSync::kNone
                  ? OptimizerSync::kNone
                  : scenario.sync.value_or(schedule.default_sync());
  const int devices = schedule.layout(scenario.stages).devices;
  spec.make_comm = [comm_spec = scenario.comm, devices, nodes = pipeline_device_nodes(scenario, devices),
                    inter_node = inter_node_link_of(scenario)] {
    return comm_model_of(comm_spec, devices, nodes, inter_node);
  };
  return spec;
}

double estimated_ops(const Scenario& scenario, const ScheduleRequest& request,
                     const ResolveOptions& options) {
  try {
    const Scenario effective = scenario_for(scenario, request);
    const std::unique_ptr<Schedule> schedule = make_schedule(request.name, request.params);
    PipelineSpec spec = pipeline_spec_for(effective, *schedule);
    if (options.batches > 0) spec.batches = options.batches;
    schedule->check(spec);  // a point the schedule refuses runs nothing
    const PipelineLayout layout = schedule->layout(effective.stages);
    return estimate_resources(run_shape(effective, *schedule, spec, layout, options)).ops;
  } catch (const InputError&) {
    return 0;  // the run itself will say what is wrong
  }
}

double estimated_ops(const ResolvedRun& run, const ResolveOptions& options) {
  return estimate_resources(run_shape(run.scenario, *run.schedule, run.spec, run.layout, options)).ops;
}

std::unique_ptr<CommModel> ResolvedRun::make_comm() const {
  return make_comm_model(scenario, layout);
}

ResolvedRun resolve(const Scenario& scenario, const ScheduleRequest& request, const ResolveOptions& options) {
  require_modelled(scenario);  // a dense stand-in is never priced silently
  ResolvedRun run;
  run.scenario = scenario_for(scenario, request);  // the entry's own pipeline: overrides
  run.schedule = make_schedule(request.name, request.params);
  run.label = run.schedule->label() + pipeline_label(run.scenario, request);
  run.spec = pipeline_spec_for(run.scenario, *run.schedule);
  if (options.batches > 0) run.spec.batches = options.batches;
  run.layout = run.schedule->layout(run.scenario.stages);
  if (options.check) check_run(run, request, options);
  run.costs = make_cost_model(run.scenario, run.layout, options.limits);
  run.static_memory = static_memory(run.scenario, run.layout, options.limits);
  // What a run may fill: the device's capacity (GiB) less the reserve.
  if (run.scenario.transformer) {
    run.memory_capacity_bytes = run.scenario.transformer->profile.usable_memory_bytes();
  } else if (run.scenario.memory_capacity_gb > 0) {
    run.memory_capacity_bytes = run.scenario.memory_capacity_gb * kBytesPerGiB;
  }
  return run;
}

}  // namespace pipesim
