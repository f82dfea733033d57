#include "train/execute.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/resolve.h"
#include "api/simulation.h"
#include "base/errors.h"
#include "executor/costs/measured_costs.h"
#include "executor/mpi_transport.h"
#include "executor/real_executor.h"
#include "executor/replay_executor.h"
#include "executor/study/validation.h"
#include "executor/worker_numerics.h"
#include "schedules/registry.h"
#include "sim/comm_model.h"
#include "sim/engine/engine.h"
#include "sim/resource_estimate.h"

namespace pipesim {

executor::TrainingSetup training_setup_for(const executor::TrainingSetup& given, const Scenario& scenario,
                                           const PipelineLayout& layout) {
  executor::TrainingSetup setup = given;
  setup.microbatches_per_batch = scenario.microbatches;
  // One model piece per stage of a copy: copies of the model (dualpipe, chimera) share the pieces.
  setup.shape.blocks = executor::blocks_for_stages(setup.shape, layout.stages_per_pipeline());
  return setup;
}

ExecutionEstimate estimate_execution(const executor::TrainingSetup& setup, const PipelineSpec& spec,
                                     const PipelineLayout& layout) {
  const executor::ModelShape& m = setup.shape;
  const bool gpt = m.kind == executor::ModelKind::kGpt;
  const double d = m.width, tokens_per_sample = gpt ? m.input_width : 1;
  // Matrices per block: the MLP's 2 x (d x 4d), the GPT's attention 4d² more; plus the input and the head.
  const double params = m.blocks * (gpt ? 12.0 : 8.0) * d * d + (m.input_width + m.classes) * d +
                        static_cast<double>(m.classes) * m.embedding_width;
  const double samples = static_cast<double>(setup.samples_per_microbatch) * spec.microbatches * spec.batches;
  ExecutionEstimate e;
  e.flops = 6 * params * samples * tokens_per_sample;
  e.ops = 3.0 * layout.stages * spec.microbatches * spec.batches +
          static_cast<double>(layout.stages) * spec.batches;
  // Weights, gradients and two optimizer moments, plus a weight version per device at most (PipeDream), and
  // a batch of activations in flight (about 12 floats per token and width per block).
  const double activations = static_cast<double>(setup.samples_per_microbatch) * spec.microbatches *
                             tokens_per_sample * d * 12 * (m.blocks + 2);
  e.bytes = 4 * (params * (4 + layout.devices) + activations);
  return e;
}

void check_execution_resources(const ExecutionEstimate& e, const std::string& where, const Limits& limits) {
  if (e.bytes > limits.memory_bytes) {
    throw ResourceLimitError(
        fmt::format("{}: training this model would need about {:.3g} GB (weights, gradients, optimizer "
                    "state, weight versions "
                    "and a batch of activations), above the {:.3g} GB ceiling; lower the width, blocks, "
                    "samples or m, or raise "
                    "the ceiling with --max-memory-gb",
                    where, e.bytes / 1e9, limits.memory_bytes / 1e9));
  }
  // An executed op costs the executor about 100 times a simulated one (numerics, threads, bookkeeping).
  constexpr double kExecutedOpWeight = 100;
  if (e.ops * kExecutedOpWeight > limits.ops) {
    throw ResourceLimitError(fmt::format(
        "{}: training would execute about {:.3g} ops, above the {:.3g} the ceiling allows the executor "
        "(--max-ops "
        "{:.3g} simulated ops, an executed op weighing {:g}); lower m, the batches or N, or raise --max-ops",
        where, e.ops, limits.ops / kExecutedOpWeight, limits.ops, kExecutedOpWeight));
  }
  if (e.flops > limits.flops) {
    throw ResourceLimitError(fmt::format(
        "{}: training this model would compute about {:.3g} TFLOP (hours at tens of GFLOP/s per core), above "
        "the "
        "{:.3g} TFLOP ceiling; lower the width, blocks, samples, m or the batches, or raise the ceiling with "
        "--max-tflop",
        where, e.flops / 1e12, limits.flops / 1e12));
  }
}

namespace {

// A delay mask: the marked stages read the weights one step old in both directions (double buffering at the
// batch: microbatch j reads version max(j / m - 1, 0), stashed for its backward) and step the newest; the
// others read the newest as before. Only on a plan that reads the newest everywhere (a synchronous one).
void delay_stages(ExecutionPlan& plan, int microbatches, const std::vector<bool>& delayed) {
  if (delayed.empty()) return;
  if (static_cast<int>(delayed.size()) != plan.layout.stages) {
    throw InputError(
        fmt::format("a delay mask of {} stages for a layout of {}", delayed.size(), plan.layout.stages));
  }
  if (plan.forward_reads.period_microbatches != 0 || plan.backward_reads != BackwardReads::kCurrentWeights) {
    throw InputError(
        "a delay mask applies to schedules whose ops read the newest weights (synchronous ones)");
  }
  plan.backward_reads = BackwardReads::kStashedWeights;
  plan.forward_reads.period_microbatches = microbatches;
  plan.forward_reads.lag_of_stage.assign(delayed.size(), -1);
  for (std::size_t s = 0; s < delayed.size(); ++s)
    if (delayed[s]) plan.forward_reads.lag_of_stage[s] = 1;
}

// With free transfers a timeline is never shorter than its busiest device's work, nor longer than all its
// work one op after another (some device is always busy: nothing waits on a transfer).
void check_pipelined_time(const RunTrace& trace, int devices) {
  std::vector<TimeNs> busy(static_cast<std::size_t>(devices), 0);
  TimeNs total = 0;
  for (const OpRecord& op : trace.ops) {
    busy.at(static_cast<std::size_t>(op.device)) += op.duration_ns();
    total += op.duration_ns();
  }
  const TimeNs busiest = busy.empty() ? 0 : *std::max_element(busy.begin(), busy.end());
  if (trace.makespan_ns < busiest || trace.makespan_ns > total) {
    throw std::logic_error(fmt::format("the measured pipeline lasts {} ns, outside [{}, {}] ns of its work",
                                       trace.makespan_ns, busiest, total));
  }
}

// The run the simulator would build (api/resolve.h), without the cost checks: the executor measures its own
// costs, so a scenario that gives only F and B still trains a schedule that splits I and W.
ResolvedRun exec_resolve(const Scenario& scenario_as_given, const ScheduleRequest& request,
                         const ExecuteOptions& options) {
  ResolveOptions resolve_options;
  resolve_options.check = false;
  resolve_options.task_graph = false;
  resolve_options.limits = options.limits;
  return resolve(scenario_as_given, request, resolve_options);
}

// The schedule's plan, with the options' delay mask applied.
ExecutionPlan exec_plan(const ResolvedRun& resolved, const PipelineSpec& spec,
                        const ExecuteOptions& options) {
  ExecutionPlan plan = resolved.schedule->plan(spec, *resolved.costs);
  delay_stages(plan, spec.microbatches, options.one_step_delayed);
  return plan;
}

// What the phases of one execution share: the resolved run, the setup and model it trains, and the result.
struct ExecContext {
  const ExecuteOptions& options;
  const ResolvedRun& resolved;
  const executor::TrainingSetup& setup;
  const executor::StagedModel& model;
  ExecutedSchedule& run;

  // The model evaluated is the first copy's stages (the copies hold the same weights).
  void evaluate_at(int batch, std::vector<std::vector<float>> stage_parameters) const {
    stage_parameters.resize(resolved.layout.stages_per_pipeline());
    const executor::Evaluation e =
        executor::evaluate(model, stage_parameters, setup, options.validation_samples);
    run.evaluations.push_back({batch, e.loss, e.accuracy});
  }
};

// The numerics dumps (replay mode only), written before the run: the initial weights and the batches.
void exec_write_dumps(const ExecContext& ctx) {
  const NumericsDumpOptions& dump = ctx.options.dump;
  if (dump.any() && ctx.options.mode != ExecuteMode::kReplay)
    throw InputError("the numerics dumps (--dump-init, --dump-batches) need replay mode");
  if (!dump.weights_at_steps.empty() && dump.init_dir.empty())
    throw InputError("--dump-weights-at writes beside the initial weights: give --dump-init DIR as well");
  if (!dump.init_dir.empty()) {
    write_numerics_init(dump.init_dir, ctx.setup, ctx.model, ctx.run.label, ctx.run.spec.batches,
                        dump.weights_at_steps);
  }
  if (!dump.batches_dir.empty()) write_numerics_batches(dump.batches_dir, ctx.setup, ctx.run.spec.batches);
}

// What the replay's observer keeps between ops.
struct ExecReplayProgress {
  int batches_applied = 0;
  std::vector<int> last_step;  // optimizer steps each stage took (with --dump-weights-at)
};

// The stage's weights after its K-th step, as that step leaves them (--dump-weights-at K).
void exec_dump_stage_weights(const ExecContext& ctx, int stage, const executor::WorkerNumerics& numerics,
                             ExecReplayProgress& progress) {
  const std::vector<int>& at_steps = ctx.options.dump.weights_at_steps;
  const int steps = numerics.optimizer_steps(stage);
  if (std::find(at_steps.begin(), at_steps.end(), steps) != at_steps.end() &&
      stage < ctx.resolved.layout.stages_per_pipeline()) {
    write_numerics_stage_weights(ctx.options.dump.init_dir, steps, ctx.model, stage,
                                 numerics.parameters(stage));
  }
  progress.last_step[stage] = std::max(progress.last_step[stage], steps);
}

// Held-out evaluations of every eval_every_batches-th batch and of the last, each once every stage has
// applied that batch's gradients (after its step: evaluated at its last forward, a flush's batch k showed
// the weights of batch k - 1).
void exec_evaluate_applied_batch(const ExecContext& ctx, const executor::WorkerNumerics& numerics,
                                 ExecReplayProgress& progress) {
  const int stages = ctx.resolved.layout.stages_per_pipeline();
  const int m = ctx.run.spec.microbatches;
  const int every = ctx.options.eval_every_batches;
  std::int64_t applied = numerics.applied_microbatches(0);
  for (int s = 1; s < stages; ++s) applied = std::min(applied, numerics.applied_microbatches(s));
  if (applied / m <= progress.batches_applied) return;
  progress.batches_applied = static_cast<int>(applied / m);
  const int batch = progress.batches_applied - 1;
  if (batch + 1 != ctx.run.spec.batches && (every == 0 || (batch + 1) % every != 0)) return;
  std::vector<std::vector<float>> params;
  for (int s = 0; s < stages; ++s) params.push_back(numerics.parameters(s));
  ctx.evaluate_at(batch, params);
}

// The caller's observer first, then, after each optimizer step, the weight dumps and the evaluations.
executor::ReplayObserver exec_replay_observer(const ExecContext& ctx, ExecReplayProgress& progress) {
  return [&ctx, &progress](const OpRecord& op, const executor::WorkerNumerics& numerics) {
    if (ctx.options.observer) ctx.options.observer(op, numerics);
    if (op.action.kind != OpKind::U) return;
    if (!ctx.options.dump.weights_at_steps.empty())
      exec_dump_stage_weights(ctx, op.action.stage, numerics, progress);
    if (ctx.options.eval_every_batches >= 0) exec_evaluate_applied_batch(ctx, numerics, progress);
  };
}

// Pass 1 measures every op's thread CPU time in the order of the scenario's clock; pass 2 replays on those
// times, so its order and timestamps are the per-device virtual clocks of the measured costs.
void exec_replay_on_measured_clock(const ExecContext& ctx, ExecutionPlan& plan, CommModel& comm,
                                   const executor::ReplayObserver& observer) {
  ExecutionPlan measuring_plan = exec_plan(ctx.resolved, ctx.run.spec, ctx.options);
  const executor::ExecutionResult measuring =
      executor::execute_replay(measuring_plan, *ctx.resolved.costs, comm, ctx.setup);
  const executor::PerOpCostModel measured(measuring.ops, ctx.resolved.layout.stages, *ctx.resolved.costs);
  const std::unique_ptr<CommModel> comm2 = ctx.resolved.make_comm();
  ctx.run.result = executor::execute_replay(plan, measured, *comm2, ctx.setup, observer);
}

// The pipeline's own time: the same plan on what each op cost here, with in-memory (free) transfers.
void exec_measure_pipeline(const ExecContext& ctx) {
  const PipelineLayout& layout = ctx.resolved.layout;
  ExecutionPlan again = exec_plan(ctx.resolved, ctx.run.spec, ctx.options);
  const executor::PerOpCostModel measured(ctx.run.result.ops, layout.stages, *ctx.resolved.costs);
  FixedLatencyComm free_transfers(std::vector<TimeNs>(layout.devices, 0));
  ctx.run.measured_pipeline = simulate(again, measured, free_transfers);
  check_pipelined_time(ctx.run.measured_pipeline, layout.devices);
}

// Every stage reached each --dump-weights-at step (else its weights there were never written).
void exec_check_dumped_steps(const ExecContext& ctx, const std::vector<int>& last_step) {
  for (int step : ctx.options.dump.weights_at_steps) {
    for (int s = 0; s < ctx.resolved.layout.stages_per_pipeline(); ++s) {
      if (step > last_step[s]) {
        throw InputError(fmt::format("--dump-weights-at {}: stage {} took {} optimizer steps in this run",
                                     step, s + 1, last_step[s]));
      }
    }
  }
}

void exec_replay(const ExecContext& ctx, ExecutionPlan& plan) {
  const std::unique_ptr<CommModel> comm = ctx.resolved.make_comm();
  ExecReplayProgress progress;
  progress.last_step.assign(ctx.resolved.layout.stages, 0);
  const executor::ReplayObserver observer = exec_replay_observer(ctx, progress);
  if (ctx.options.measured_clock) {
    exec_replay_on_measured_clock(ctx, plan, *comm, observer);
  } else {
    ctx.run.result = executor::execute_replay(plan, *ctx.resolved.costs, *comm, ctx.setup, observer);
    if (ctx.options.measured_pipeline) exec_measure_pipeline(ctx);
  }
  exec_check_dumped_steps(ctx, progress.last_step);
}

// Real mode: the workers on threads of this process, or one per mpi rank.
void exec_real(const ExecContext& ctx, ExecutionPlan& plan) {
  const PipelineLayout& layout = ctx.resolved.layout;
  if (ctx.options.transport == ExecuteTransport::kMpi) {
    const std::unique_ptr<executor::Transport> transport = executor::make_mpi_transport(layout.devices);
    ctx.run.result = executor::gather_on_first_rank(executor::execute_real(plan, ctx.setup, *transport),
                                                    layout, *transport);
  } else {
    executor::ThreadsTransport transport(layout.devices);
    ctx.run.result = executor::execute_real(plan, ctx.setup, transport);
  }
}

// Real mode's one evaluation, of the final weights. Under mpi only rank 0 holds every stage's weights
// (gathered); the other ranks hold their own.
void exec_evaluate_final(const ExecContext& ctx) {
  const auto& final_parameters = ctx.run.result.final_parameters;
  const bool holds_every_stage =
      final_parameters.size() == static_cast<std::size_t>(ctx.resolved.layout.stages) &&
      std::none_of(final_parameters.begin(), final_parameters.end(), [](const auto& p) { return p.empty(); });
  if (ctx.options.mode == ExecuteMode::kReal && ctx.options.eval_every_batches >= 0 && holds_every_stage)
    ctx.evaluate_at(ctx.run.spec.batches - 1, final_parameters);
}

}  // namespace

ExecutedSchedule execute_schedule(const Scenario& scenario_as_given, const ScheduleRequest& request,
                                  const ExecuteOptions& options) {
  ResolvedRun resolved = exec_resolve(scenario_as_given, request, options);
  const PipelineLayout& layout = resolved.layout;
  ExecutedSchedule run;
  run.label = resolved.schedule->label();
  run.mode = options.mode;
  run.spec = resolved.spec;
  resolved.schedule->check(run.spec);
  run.virtual_stages = layout.stages;
  run.layout = layout;
  const executor::TrainingSetup setup = training_setup_for(options.setup, resolved.scenario, layout);
  // Before anything is allocated: the model, its copies and a batch of activations, and the work.
  check_execution_resources(estimate_execution(setup, run.spec, layout),
                            request.params.where() + ": " + run.label, options.limits);
  ExecutionPlan plan = exec_plan(resolved, run.spec, options);
  run.setup = setup;
  run.guarantees = resolved.schedule->guarantees(run.spec);
  const executor::StagedModel model = executor::build_staged_model(setup, layout.stages_per_pipeline());
  const ExecContext ctx{options, resolved, setup, model, run};
  exec_write_dumps(ctx);
  if (options.mode == ExecuteMode::kReplay)
    exec_replay(ctx, plan);
  else
    exec_real(ctx, plan);
  exec_evaluate_final(ctx);
  return run;
}

}  // namespace pipesim
