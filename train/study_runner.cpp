#include "train/study_runner.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <utility>

#include "api/simulation.h"
#include "base/errors.h"
#include "base/output_path.h"
#include "base/task_pool.h"
#include "base/text_file.h"
#include "executor/scenario_training.h"
#include "executor/study/validation.h"
#include "executor/worker_numerics.h"
#include "io/data_dirs.h"
#include "report/progress_bar.h"
#include "schedules/registry.h"
#include "train/execute.h"

namespace pipesim {

namespace {

// A path as given, else relative to the data search path (io/data_dirs.h).
std::string resolve(const Study& study) {
  if (std::filesystem::exists(study.target_scenario)) return study.target_scenario;
  return find_data_path(study.target_scenario, study.target_scenario_where + ": the scenario");
}

// The target scenario's text (a few kB, read for each run's hash: the file may change between resumes).
std::string target_scenario_text(const Study& study) {
  return read_text_file(resolve(study), "target_setting scenario");
}

}  // namespace

std::string StudyRun::group() const {
  return fmt::format("B={} {} {} {}", global_batch, schedule.label(), optimizer.label,
                     executor::delay_correction_name(correction));
}
std::string StudyRun::key() const {
  return fmt::format("{} seed={}", group(), seed);
}

std::string StudyRun::hash(const Study& study) const {
  std::string text = fmt::format(
      "task={};input={};width={};blocks={};classes={};kind={};token={};embedding={};heads={};target={};",
      study.task, study.shape.input_width, study.shape.width, study.shape.blocks, study.shape.classes,
      static_cast<int>(study.shape.kind), study.shape.token_input, study.shape.embedding_width,
      study.shape.heads, study.target_scenario);
  for (const std::string& o : study.target_overrides) text += "set=" + o + ";";
  // The target setting's file itself: its costs make the curves' predicted seconds.
  text += "target_text=" + target_scenario_text(study) + ";";
  // The protocol: points after the step, on the fixed held-out set (executor/study/validation.h).
  text += fmt::format("protocol=after-step,fixed-validation-{}x{};", executor::kValidationSeed,
                      executor::kValidationChunkSamples);
  text += fmt::format("stages={};budget={};eval={};eval_steps={};validation={};warmup={:.17g};floor={:.17g};",
                      study.stages, study.sample_budget, study.eval_every_samples, study.eval_every_steps,
                      study.validation_samples, study.warmup_fraction, study.floor_ratio);
  text += fmt::format("B={};schedule={};m={};", global_batch, schedule.request(), schedule.microbatches);
  // Only with its own depth: without one the hash is as before.
  if (schedule.stages > 0) text += fmt::format("N={};", schedule.stages);
  // Only with a delay mask: without one the hash (and the curves it lets a study resume) is as before.
  if (!schedule.delay_mask.empty()) text += fmt::format("delay={};", schedule.delay_mask);
  const executor::OptimizerConfig& o = optimizer.config;
  text += fmt::format(
      "optimizer={};lr={:.9g};momentum={:.9g};beta1={:.9g};beta2={:.9g};eps={:.9g};wd={:.9g};"
      "adamw={:.9g};ns={};",
      static_cast<int>(o.kind), optimizer.learning_rate, o.momentum, o.beta1, o.beta2, o.epsilon,
      o.weight_decay, o.adamw_lr_ratio, o.newton_schulz_steps);
  if (study.lr_scaling != Study::LrScaling::kNone)
    text += fmt::format("lr_scale={:.17g};", learning_rate_scale(study, schedule));
  // Only Adan reads beta3, only SOAP its preconditioners' settings: left out for the others, whose hashes
  // (and resumable curves) stay as they were.
  if (o.kind == executor::OptimizerKind::kAdan) text += fmt::format("beta3={:.9g};", o.beta3);
  if (o.kind == executor::OptimizerKind::kSoap) {
    text += fmt::format("shampoo_beta={:.9g};precondition_frequency={};", o.shampoo_beta,
                        o.precondition_frequency);
  }
  text += fmt::format("correction={};seed={}", executor::delay_correction_name(correction), seed);
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, 64 bits: stable across builds and machines
  for (const unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return fmt::format("{:016x}", h);
}

namespace {

ScheduleParams params_of(const Study& study, const StudySchedule& schedule) {
  ScheduleParams params(study.source);
  for (const auto& [key, value] : schedule.params) params.set(key, value);
  return params;
}

}  // namespace

bool is_asynchronous(const Study& study, const StudySchedule& schedule) {
  return make_schedule(schedule.name, params_of(study, schedule))->default_sync() == OptimizerSync::kNone;
}

namespace {

const std::vector<executor::DelayCorrection>& corrections_of(const Study& study,
                                                             const StudySchedule& schedule) {
  return schedule.corrections.empty() ? study.corrections : schedule.corrections;
}

// How the runs of a sweep's other schedules are listed: at the chosen rate (deferred until there is one), or
// at every rate (the keys a CSV may hold).
enum class RatePick { kChosen, kEvery };

std::vector<StudyRun> collect_runs(const Study& study, const StudyCurves& curves, RatePick pick) {
  const auto chosen = pick == RatePick::kChosen ? chosen_learning_rates(study, curves)
                                                : std::map<std::pair<int, std::string>, std::size_t>{};
  std::vector<StudyRun> runs;
  // The runs of one schedule that does not sweep, at each optimizer's rate (or every rate).
  const auto add_unswept = [&](int batch, const StudySchedule& schedule, executor::DelayCorrection correction,
                               std::size_t o) {
    const StudyOptimizer& optimizer = study.optimizers[o];
    bool deferred = false;
    if (optimizer.swept && pick == RatePick::kChosen) {
      const auto found = chosen.find({batch, optimizer.family});
      const bool first_rate = o == 0 || study.optimizers[o - 1].family != optimizer.family;
      if (found == chosen.end()) {
        if (!first_rate) return;  // one placeholder per family, at its first rate
        deferred = true;
      } else if (found->second != o) {
        return;
      }
    }
    for (std::uint64_t seed : study.seeds)
      runs.push_back({batch, schedule, optimizer, correction, seed, deferred});
  };
  for (int batch : study.global_batches) {
    for (const StudySchedule& schedule : study.schedules) {
      const bool async = is_asynchronous(study, schedule);
      for (std::size_t o = 0; o < study.optimizers.size(); ++o) {
        if (!trains_with(schedule, study.optimizers[o])) continue;
        for (executor::DelayCorrection correction : corrections_of(study, schedule)) {
          if (!async && correction != executor::DelayCorrection::kNone) continue;
          if (study.optimizers[o].swept && !schedule.lr_sweep) {
            add_unswept(batch, schedule, correction, o);
            continue;
          }
          for (std::uint64_t seed : study.seeds)
            runs.push_back({batch, schedule, study.optimizers[o], correction, seed});
        }
      }
    }
  }
  if (!study.same_step_rate_flush) return runs;
  // A flush at each asynchronous schedule's step batch (B' = B * per-step / m, m' = per-step): the same
  // optimizer steps per sample, the comparison that tells staleness from step rate. Once per (B', m'); at a
  // swept optimizer's chosen rate for B (the baseline does not sweep).
  std::set<std::tuple<int, int, int>> baselines;  // (B', m', N)
  for (int batch : study.global_batches) {
    for (const StudySchedule& schedule : study.schedules) {
      if (!is_asynchronous(study, schedule)) continue;
      const int per_step = microbatches_per_step(study, schedule);
      if (per_step >= schedule.microbatches) continue;
      const int step_batch = batch / schedule.microbatches * per_step;
      if (!baselines.insert({step_batch, per_step, stages_of(study, schedule)}).second) continue;
      StudySchedule flush;
      flush.name = "1f1b-flush";
      flush.microbatches = per_step;
      flush.stages = schedule.stages;
      flush.optimizers = schedule.optimizers;
      flush.baseline = true;
      const std::size_t before = runs.size();
      for (std::size_t o = 0; o < study.optimizers.size(); ++o) {
        if (trains_with(flush, study.optimizers[o]))
          add_unswept(batch, flush, executor::DelayCorrection::kNone, o);
      }
      for (std::size_t i = before; i < runs.size(); ++i) runs[i].global_batch = step_batch;
    }
  }
  return runs;
}

}  // namespace

std::map<std::pair<int, std::string>, std::size_t> chosen_learning_rates(const Study& study,
                                                                         const StudyCurves& curves) {
  // Per (B, family) and rate: the sum of the swept runs' final validation losses, their count, and whether
  // any is missing.
  struct Tally {
    double final_loss_sum = 0;
    int runs = 0;
    bool missing = false;
  };
  std::map<std::pair<int, std::string>, std::map<std::size_t, Tally>> tallies;
  for (int batch : study.global_batches) {
    for (const StudySchedule& schedule : study.schedules) {
      if (!schedule.lr_sweep) continue;
      for (std::size_t o = 0; o < study.optimizers.size(); ++o) {
        const StudyOptimizer& optimizer = study.optimizers[o];
        if (!optimizer.swept || !trains_with(schedule, optimizer)) continue;
        Tally& tally = tallies[{batch, optimizer.family}][o];
        for (std::uint64_t seed : study.seeds) {
          const StudyRun run{batch, schedule, optimizer, executor::DelayCorrection::kNone, seed};
          const auto found = curves.find(run.key());
          if (found == curves.end() || found->second.empty()) {
            tally.missing = true;
          } else {
            tally.final_loss_sum += found->second.back().val_loss;
            ++tally.runs;
          }
        }
      }
    }
  }
  std::map<std::pair<int, std::string>, std::size_t> chosen;
  for (const auto& [group, rates] : tallies) {
    std::optional<std::size_t> best;
    double best_loss = std::numeric_limits<double>::infinity();
    bool complete = true;
    for (const auto& [o, tally] : rates) {
      complete = complete && !tally.missing && tally.runs > 0;
      const double mean = tally.runs > 0 ? tally.final_loss_sum / tally.runs : 0;
      if (tally.runs > 0 && mean < best_loss) {  // ties: the first rate listed
        best_loss = mean;
        best = o;
      }
    }
    if (complete && best) chosen[group] = *best;
  }
  return chosen;
}

std::vector<StudyRun> study_runs(const Study& study, const StudyCurves& curves) {
  return collect_runs(study, curves, RatePick::kChosen);
}

std::vector<StudyRun> study_runs_at_every_rate(const Study& study) {
  return collect_runs(study, {}, RatePick::kEvery);
}

std::vector<StudyRun> comparison_runs(const Study& study, const StudyCurves& curves) {
  const auto chosen = chosen_learning_rates(study, curves);
  std::vector<StudyRun> shown;
  for (const StudyRun& run : study_runs(study, curves)) {
    if (run.deferred) continue;
    if (run.optimizer.swept && run.schedule.lr_sweep) {  // a swept schedule: at the chosen rate only
      const auto found = chosen.find({run.global_batch, run.optimizer.family});
      if (found != chosen.end() && study.optimizers[found->second].label != run.optimizer.label) continue;
    }
    shown.push_back(run);
  }
  return shown;
}

std::int64_t run_samples(const Study& study, const StudyRun& run) {
  const std::int64_t batches = (study.sample_budget + run.global_batch - 1) / run.global_batch;
  return batches * run.global_batch;
}

int microbatches_per_step(const Study& study, const StudySchedule& schedule) {
  PipelineSpec spec;
  spec.devices = stages_of(study, schedule);
  spec.microbatches = schedule.microbatches;
  return make_schedule(schedule.name, params_of(study, schedule))->microbatches_per_step(spec);
}

double learning_rate_scale(const Study& study, const StudySchedule& schedule) {
  if (study.lr_scaling == Study::LrScaling::kNone) return 1.0;
  const double ratio = static_cast<double>(microbatches_per_step(study, schedule)) / schedule.microbatches;
  return study.lr_scaling == Study::LrScaling::kSqrt ? std::sqrt(ratio) : ratio;
}

Scenario target_scenario(const Study& study, const StudyRun& run, std::int64_t batches) {
  std::vector<std::string> overrides = study.target_overrides;
  overrides.push_back(fmt::format("pipeline.stages={}", stages_of(study, run.schedule)));
  overrides.push_back(fmt::format("pipeline.microbatches={}", run.schedule.microbatches));
  overrides.push_back(fmt::format("pipeline.global_batch={}", run.global_batch));
  overrides.push_back(fmt::format("pipeline.batches={}", batches));
  return load_scenario(resolve(study), overrides);
}

DelayFigures largest_delays(const Study& study, const StudyRun& run) {
  if (!run.schedule.delay_mask.empty()) return {1, 1};  // the masked stages read the weights one step old
  // A few batches show every stage's largest drift and staleness (they repeat from the second batch on).
  const Scenario scenario = target_scenario(study, run, 8);
  const SimulationResult result =
      simulate_schedule(scenario, {run.schedule.name, params_of(study, run.schedule)},
                        SimulationOptions{.limits = study.limits});
  DelayFigures largest;
  for (const StageDrift& stage : result.drift.stages) {
    largest.drift_max = std::max(largest.drift_max, stage.drift_max);
    largest.staleness_max = std::max(largest.staleness_max, stage.staleness_max);
  }
  return largest;
}

std::vector<std::vector<TimeNs>> step_end_times(const RunTrace& trace, int stages) {
  std::vector<std::vector<TimeNs>> ends(static_cast<std::size_t>(stages));
  for (const OpRecord& op : trace.ops) {
    if (op.action.kind != OpKind::U || op.action.stage >= stages) continue;
    auto& stage = ends[static_cast<std::size_t>(op.action.stage)];
    const auto step = static_cast<std::size_t>(op.action.microbatch);
    if (stage.size() <= step) stage.resize(step + 1, -1);
    stage[step] = op.end_ns;
  }
  return ends;
}

double seconds_when_applied(const std::vector<std::vector<TimeNs>>& step_end_ns,
                            const std::vector<std::vector<std::int64_t>>& applied_after_step,
                            std::int64_t microbatches) {
  TimeNs latest = 0;
  for (std::size_t s = 0; s < applied_after_step.size(); ++s) {
    const auto& applied = applied_after_step[s];
    const auto first = std::lower_bound(applied.begin(), applied.end(), microbatches);
    if (first == applied.end()) {
      throw std::logic_error(
          fmt::format("stage {} never applied {} microbatches' gradients", s + 1, microbatches));
    }
    const auto step = static_cast<std::size_t>(first - applied.begin());
    if (s >= step_end_ns.size() || step >= step_end_ns[s].size() || step_end_ns[s][step] < 0) {
      throw std::logic_error(fmt::format("stage {}'s step {} has no end time", s + 1, step));
    }
    latest = std::max(latest, step_end_ns[s][step]);
  }
  return static_cast<double>(latest) / 1e9;
}

namespace {

// The run's training setup: the study's model (a GPT task's sized by its data set) with a block or more per
// stage, the run's microbatches, its optimizer at the (scaled) rate, its correction, seed and rate schedule.
void study_run_fill_setup(const Study& study, const StudyRun& run, int stages, std::int64_t total_samples,
                          executor::TrainingSetup& setup) {
  const int m = run.schedule.microbatches;
  setup.shape = study.shape;
  if (study.task != "teacher-mlp") {
    // The GPT tasks: the data set loaded and the model sized by it, as a scenario's `executor:` section does.
    ExecutorSection section;
    section.model = "gpt";
    section.data = study.task == "austen-gpt" ? "austen" : "snippet";
    section.width = study.shape.width;
    section.blocks = study.shape.blocks;
    setup = executor::training_setup_for(section, setup);
  }
  setup.shape.blocks = executor::blocks_for_stages(setup.shape, stages);  // as execute_schedule raises it
  setup.samples_per_microbatch = run.global_batch / m;
  setup.microbatches_per_batch = m;
  const double lr_scale = learning_rate_scale(study, run.schedule);
  setup.learning_rate = static_cast<float>(run.optimizer.learning_rate * lr_scale);
  // Muon's AdamW part keeps its ratio to the (scaled) learning rate.
  setup.optimizer = run.optimizer.config;
  setup.correction = run.correction;
  setup.seed = run.seed;
  setup.lr_schedule = {.warmup_fraction = study.warmup_fraction,
                       .floor_ratio = study.floor_ratio,
                       .total_microbatches = total_samples / setup.samples_per_microbatch};
}

// Before the model is built (its blocks grow with the stages, and so does its split's search): the estimate
// execute_schedule checks, so that a study of a million stages is refused, not allocated.
void study_run_check_resources(const Study& study, const StudyRun& run, const ScheduleRequest& request,
                               const executor::TrainingSetup& setup, int devices,
                               std::int64_t total_samples) {
  PipelineSpec spec;
  spec.devices = devices;
  spec.microbatches = run.schedule.microbatches;
  spec.batches = static_cast<int>(std::min<std::int64_t>(total_samples / run.global_batch, 1 << 30));
  check_execution_resources(
      estimate_execution(setup, spec, make_schedule(request.name, request.params)->layout(devices)),
      fmt::format("{}: {} at N = {}", study.source, run.schedule.label(), devices), study.limits);
}

// The curve as the replay runs. A point is taken after a step: its samples are those whose gradients every
// stage has applied (a flush's point after its batch's U, not before it), and its train loss the mean of
// those microbatches' losses.
struct StudyRunCurve {
  using Clock = std::chrono::steady_clock;

  const Study& study;
  const executor::StagedModel& model;
  const executor::TrainingSetup& setup;
  int stages;
  std::int64_t total_samples;
  std::vector<CurvePoint> points;
  // Per stage, the microbatches applied after each of its steps: where the points lie on the measured
  // pipeline's clock, which has its own order.
  std::vector<std::vector<std::int64_t>> applied_after_step;
  std::optional<Clock::time_point> last_return;
  double measured_s = 0;
  std::int64_t evaluated_microbatches = 0;
  std::int64_t next_eval_samples;
  std::int64_t next_eval_steps;

  StudyRunCurve(const Study& study_in, const executor::StagedModel& model_in,
                const executor::TrainingSetup& setup_in, int stages_in, std::int64_t total_samples_in)
      : study(study_in),
        model(model_in),
        setup(setup_in),
        stages(stages_in),
        total_samples(total_samples_in),
        applied_after_step(stages_in),
        next_eval_samples(study_in.eval_every_samples),
        next_eval_steps(study_in.eval_every_steps) {}

  // The observer: the executor's own time is what passed between the observer's calls.
  void after_op(const OpRecord& op, const executor::WorkerNumerics& numerics) {
    if (last_return) measured_s += std::chrono::duration<double>(Clock::now() - *last_return).count();
    if (op.action.kind == OpKind::U) after_step(op, numerics);
    last_return = Clock::now();
  }

  void after_step(const OpRecord& op, const executor::WorkerNumerics& numerics) {
    auto& stage_applied = applied_after_step.at(op.action.stage);
    if (op.action.microbatch != static_cast<int>(stage_applied.size()))
      throw std::logic_error(fmt::format("{} out of its stage's step order", describe(op.action)));
    stage_applied.push_back(numerics.applied_microbatches(op.action.stage));
    std::int64_t applied = numerics.applied_microbatches(0);
    std::int64_t steps = numerics.optimizer_steps(0);
    for (int s = 1; s < stages; ++s) {
      applied = std::min(applied, numerics.applied_microbatches(s));
      steps = std::min<std::int64_t>(steps, numerics.optimizer_steps(s));
    }
    const std::int64_t samples = applied * setup.samples_per_microbatch;
    const bool due = study.eval_every_samples > 0 ? samples >= next_eval_samples : steps >= next_eval_steps;
    if (applied > evaluated_microbatches && (due || samples == total_samples))
      take_point(op, numerics, applied, steps, samples);
  }

  void take_point(const OpRecord& op, const executor::WorkerNumerics& numerics, std::int64_t applied,
                  std::int64_t steps, std::int64_t samples) {
    double loss_sum = 0;
    for (std::int64_t mb = evaluated_microbatches; mb < applied; ++mb)
      loss_sum += numerics.losses().at(static_cast<int>(mb));
    std::vector<std::vector<float>> params;
    for (int s = 0; s < stages; ++s) params.push_back(numerics.parameters(s));
    const executor::Evaluation e = executor::evaluate(model, params, setup, study.validation_samples);
    points.push_back({samples, steps, loss_sum / static_cast<double>(applied - evaluated_microbatches),
                      e.loss, e.accuracy, static_cast<double>(op.end_ns) / 1e9, measured_s, 0});
    evaluated_microbatches = applied;
    while (study.eval_every_samples > 0 && next_eval_samples <= samples)
      next_eval_samples += study.eval_every_samples;
    while (study.eval_every_steps > 0 && next_eval_steps <= steps) next_eval_steps += study.eval_every_steps;
  }
};

}  // namespace

std::vector<CurvePoint> train_study_run(const Study& study, const StudyRun& run) {
  const std::int64_t total_samples = run_samples(study, run);
  const int devices = stages_of(study, run.schedule);
  Scenario scenario = target_scenario(study, run, total_samples / run.global_batch);
  scenario.schedules.clear();
  const ScheduleRequest request{run.schedule.name, params_of(study, run.schedule)};
  const int stages = make_schedule(request.name, request.params)->layout(devices).stages;

  ExecuteOptions options;
  options.limits = study.limits;
  options.one_step_delayed = run.schedule.one_step_delayed;
  options.measured_pipeline = true;
  const executor::TrainingSetup& setup = options.setup;
  study_run_fill_setup(study, run, stages, total_samples, options.setup);
  study_run_check_resources(study, run, request, setup, devices, total_samples);
  const executor::StagedModel model = executor::build_staged_model(setup, stages);

  StudyRunCurve curve(study, model, setup, stages, total_samples);
  const executor::Evaluation initial =
      executor::evaluate(model, model.initial_parameters, setup, study.validation_samples);
  curve.points.push_back(
      {0, 0, std::numeric_limits<double>::quiet_NaN(), initial.loss, initial.accuracy, 0, 0, 0});
  options.observer = [&curve](const OpRecord& op, const executor::WorkerNumerics& numerics) {
    curve.after_op(op, numerics);
  };
  const ExecutedSchedule executed = execute_schedule(scenario, request, options);
  const std::vector<std::vector<TimeNs>> step_ends = step_end_times(executed.measured_pipeline, stages);
  for (CurvePoint& p : curve.points) {
    if (p.samples > 0) {
      p.pipelined_s =
          seconds_when_applied(step_ends, curve.applied_after_step, p.samples / setup.samples_per_microbatch);
    }
  }
  return std::move(curve.points);
}

std::string curve_csv_header() {
  return "run,global_batch,schedule,optimizer,correction,seed,samples,steps,train_loss,val_loss,val_accuracy,"
         "predicted_s,measured_s,pipelined_s,run_hash\n";
}

std::string curve_csv_rows(const Study& study, const StudyRun& run, const std::vector<CurvePoint>& points) {
  std::string out;
  const std::string hash = run.hash(study);
  for (const CurvePoint& p : points) {
    out += fmt::format("{},{},{},{},{},{},{},{},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{:.9g},{}\n", run.key(),
                       run.global_batch, run.schedule.label(), run.optimizer.label,
                       executor::delay_correction_name(run.correction), run.seed, p.samples, p.steps,
                       p.train_loss, p.val_loss, p.val_accuracy, p.predicted_s, p.measured_s, p.pipelined_s,
                       hash);
  }
  return out;
}

namespace {

struct ParsedRow {
  std::string key;
  std::string hash;
  CurvePoint point;
  std::string error;  // why the row cannot be read; empty when it was
};

// The header before pipelined_s was kept: its rows have 14 cells and read with pipelined_s NaN.
std::string curve_csv_header_without_pipelined_time() {
  return "run,global_batch,schedule,optimizer,correction,seed,samples,steps,train_loss,val_loss,val_accuracy,"
         "predicted_s,measured_s,run_hash\n";
}

ParsedRow parse_row(const std::string& line, std::size_t columns) {
  std::vector<std::string> cells;
  std::stringstream in(line);
  std::string cell;
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  ParsedRow row;
  if (!cells.empty()) row.key = cells[0];
  if (cells.size() != columns) {
    row.error = fmt::format("{} cells where {} were expected{}", cells.size(), columns,
                            cells.size() < 14 ? " (written by an older pipesim: no steps or run_hash)" : "");
    return row;
  }
  row.hash = cells.back();
  row.point.pipelined_s = std::numeric_limits<double>::quiet_NaN();
  try {
    std::size_t used = 0;
    row.point.samples = std::stoll(cells[6], &used);
    if (used != cells[6].size()) throw std::invalid_argument("samples");
    row.point.steps = std::stoll(cells[7], &used);
    if (used != cells[7].size()) throw std::invalid_argument("steps");
    double* fields[] = {&row.point.train_loss,  &row.point.val_loss,   &row.point.val_accuracy,
                        &row.point.predicted_s, &row.point.measured_s, &row.point.pipelined_s};
    // The figures run from cell 8 to the one before the hash: five in the old format, six now.
    for (std::size_t i = 0; i + 9 < columns; ++i) {
      *fields[i] = std::stod(cells[8 + i], &used);
      if (used != cells[8 + i].size()) throw std::invalid_argument(cells[8 + i]);
    }
  } catch (const std::exception&) {
    row.error = "a cell that is not a number";
  }
  return row;
}

// The first grid value above `value`: where train_study_run takes the point after one at `value`.
std::int64_t next_on_grid(std::int64_t value, std::int64_t every) {
  return (value / every + 1) * every;
}

// Why a complete run's points cannot be trusted, or "". `max_step_samples`: the most samples one optimizer
// step adds to those every stage has applied.
std::string curve_problem(const std::vector<CurvePoint>& points, const Study& study,
                          std::int64_t max_step_samples) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    const CurvePoint& p = points[i];
    if (i == 0 ? p.samples != 0 : p.samples <= points[i - 1].samples) {
      return i == 0 ? "its first point is not at 0 samples" : "its samples do not rise (a duplicated run?)";
    }
    // A point is taken at the first step that reaches the grid value after the last point: a later one
    // means a point in between is missing (a row dropped from the file).
    const bool missing =
        i > 0 &&
        (study.eval_every_samples > 0
             ? p.samples >= next_on_grid(points[i - 1].samples, study.eval_every_samples) + max_step_samples
             : p.steps > next_on_grid(points[i - 1].steps, study.eval_every_steps));
    if (missing) return fmt::format("a point is missing before the one at {} samples", p.samples);
    const bool finite = (i == 0 || std::isfinite(p.train_loss)) && std::isfinite(p.val_loss) &&
                        std::isfinite(p.val_accuracy) && std::isfinite(p.predicted_s) &&
                        std::isfinite(p.measured_s) && !std::isinf(p.pipelined_s);
    if (!finite) return fmt::format("a figure that is not finite at {} samples", p.samples);
  }
  return "";
}

}  // namespace

StudyCurves read_complete_curves(const std::string& csv_text, const Study& study,
                                 std::vector<std::string>* distrusted) {
  std::map<std::string, std::int64_t> expected_samples;
  std::map<std::string, std::string> expected_hash;
  std::map<std::string, std::int64_t> step_samples;  // the most one step adds (curve_problem)
  for (const StudyRun& run : study_runs_at_every_rate(study)) {
    expected_samples[run.key()] = run_samples(study, run);
    expected_hash[run.key()] = run.hash(study);
    const std::int64_t per_microbatch = run.global_batch / run.schedule.microbatches;
    step_samples[run.key()] =
        std::max<std::int64_t>(run.global_batch, per_microbatch * microbatches_per_step(study, run.schedule));
  }
  StudyCurves curves;
  std::map<std::string, std::string> why;  // runs that cannot be trusted
  long known_rows = 0, unknown_rows = 0;
  std::stringstream in(csv_text);
  std::string line;
  bool header = true;
  std::size_t columns = 15;
  while (std::getline(in, line)) {
    if (header) {
      header = false;
      if (line + "\n" == curve_csv_header_without_pipelined_time()) columns = 14;
      if (line + "\n" != curve_csv_header() && columns != 14) {
        if (distrusted && !line.empty()) {
          distrusted->push_back("the file's header is not a study curves header: nothing of it was resumed");
        }
        return {};
      }
      continue;
    }
    // A line cut short by an interruption has no newline after it: eof is set.
    if (in.eof()) break;
    const ParsedRow row = parse_row(line, columns);
    if (!expected_samples.contains(row.key)) {  // a run the study no longer has, or another study's file
      ++unknown_rows;
      continue;
    }
    ++known_rows;
    if (!row.error.empty()) {
      why.emplace(row.key, row.error);
    } else if (row.hash != expected_hash.at(row.key)) {
      why.emplace(row.key, "its settings changed since it was trained (run_hash differs)");
    } else {
      curves[row.key].push_back(row.point);
    }
  }
  for (auto it = curves.begin(); it != curves.end();) {
    const bool complete = it->second.back().samples == expected_samples.at(it->first);
    const std::string problem = complete ? curve_problem(it->second, study, step_samples.at(it->first)) : "";
    if (!problem.empty()) why.emplace(it->first, problem);
    it = complete && !why.contains(it->first) ? std::next(it) : curves.erase(it);
  }
  if (distrusted) {
    for (const auto& [key, reason] : why) distrusted->push_back(fmt::format("{}: {}", key, reason));
    if (known_rows == 0 && unknown_rows > 0) {
      distrusted->push_back(
          fmt::format("the file's {} rows name no run of this study (another study's file?)", unknown_rows));
    }
  }
  return curves;
}

StudyProgress run_study(const Study& study, const std::string& csv_path_as_given, StudyCurves& curves,
                        bool show_progress, int jobs) {
  // The curves are resumed, rewritten and appended to: a regular file (a symlink's target, the link kept).
  std::error_code ec;
  const std::string csv_path = output_target(csv_path_as_given);
  if (std::filesystem::exists(csv_path, ec) && !std::filesystem::is_regular_file(csv_path, ec)) {
    throw InputError(fmt::format(
        "{}: the study's curves must be a regular file (it is resumed and rewritten)", csv_path_as_given));
  }
  StudyProgress result;
  std::string existing;
  if (std::ifstream in(csv_path); in) {
    std::stringstream text;
    text << in.rdbuf();
    existing = text.str();
  }
  curves = read_complete_curves(existing, study, &result.distrusted);
  // The runs as the curves so far decide them (a sweep's other schedules wait for its runs); their number
  // does not change as the sweep ends.
  std::vector<StudyRun> runs = study_runs(study, curves);
  result.runs_total = static_cast<int>(runs.size());
  for (const StudyRun& run : runs) result.runs_resumed += curves.contains(run.key()) ? 1 : 0;
  // Rewrite the file with the complete runs only, in study order, then append. The new file is written beside
  // the old one and renamed over it: a kill during the rewrite leaves the old file whole.
  {
    const std::string temporary = fmt::format("{}.tmp.{}", csv_path, ::getpid());
    {
      std::ofstream out(temporary, std::ios::trunc);
      if (!out) throw InputError(fmt::format("{}: cannot write the study's curves", temporary));
      out << curve_csv_header();
      for (const StudyRun& run : study_runs_at_every_rate(study)) {
        if (curves.contains(run.key())) out << curve_csv_rows(study, run, curves.at(run.key()));
      }
      out.flush();
      if (!out) {
        std::remove(temporary.c_str());
        throw InputError(
            fmt::format("{}: cannot write the study's curves (the old file is unchanged)", csv_path));
      }
    }
    if (std::rename(temporary.c_str(), csv_path.c_str()) != 0) {
      const int error = errno;
      std::remove(temporary.c_str());
      throw InputError(
          fmt::format("{}: cannot replace the study's curves: {}", csv_path, std::strerror(error)));
    }
  }
  // Counted over all runs, resumed ones included; the ETA from the runs trained now (total work: pending).
  int done = result.runs_resumed;
  ProgressBar progress(runs.size(), "runs", show_progress,
                       static_cast<double>(result.runs_total - result.runs_resumed));
  // Runs are independent and deterministic: `jobs` threads take them in study order, and each run's rows are
  // appended whole, under the lock, as it ends (so a resumed study sees only complete runs). A sweep's other
  // schedules train in a second round, once its runs have chosen their rate.
  for (;;) {
    std::vector<const StudyRun*> pending;
    for (const StudyRun& run : runs) {
      if (!run.deferred && !curves.contains(run.key())) pending.push_back(&run);
    }
    if (pending.empty()) break;
    std::mutex mutex;
    std::atomic<std::size_t> next{0};
    std::exception_ptr failure;
    const auto work = [&] {
      for (std::size_t i = next++; i < pending.size(); i = next++) {
        try {
          std::vector<CurvePoint> points = train_study_run(study, *pending[i]);
          const std::lock_guard lock(mutex);
          std::ofstream out(csv_path, std::ios::app);
          out << curve_csv_rows(study, *pending[i], points) << std::flush;
          if (!out) throw InputError(fmt::format("{}: cannot append the study's curves", csv_path));
          curves[pending[i]->key()] = std::move(points);
          ++result.runs_executed;
          ++done;
          progress.update(static_cast<std::size_t>(done), result.runs_executed);
        } catch (...) {  // the lock above is released by now
          const std::lock_guard lock(mutex);
          if (!failure) failure = std::current_exception();
          next = pending.size();  // the other threads finish the run they hold and stop
          return;
        }
      }
    };
    run_workers(worker_count(std::max(1, jobs), pending.size(), "--jobs"), work);
    if (failure) std::rethrow_exception(failure);
    runs = study_runs(study, curves);
  }
  return result;
}

}  // namespace pipesim
