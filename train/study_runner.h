#pragma once
// Runs a learning study: every (global batch, schedule, optimizer, correction, seed) trains in replay mode
// (deterministic, any number of stages) on the study's task; each run's curve is written to the CSV as soon
// as the run ends, so an interrupted study resumes where it stopped.
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "io/scenario.h"
#include "sim/trace.h"
#include "train/study_config.h"

namespace pipesim {

struct StudyRun {
  int global_batch = 0;
  StudySchedule schedule;
  StudyOptimizer optimizer;
  executor::DelayCorrection correction = executor::DelayCorrection::kNone;
  std::uint64_t seed = 1;
  // Its optimizer's rate waits for a sweep: the swept schedules' runs are not all in yet, and `optimizer`
  // is the sweep's first rate, a placeholder (study_runs).
  bool deferred = false;
  std::string key() const;  // unique within a study, the CSV's first column
  // Hex digest of everything that changes this run's curve (the study's task, model, budget, evaluation,
  // validation set, learning-rate schedule and target setting; the run's B, schedule, optimizer settings,
  // correction and seed): the CSV's last column. A resumed row must carry the digest of the run it resumes.
  std::string hash(const Study& study) const;
  std::string group() const;  // the key without the seed: what the table averages over seeds
};

// One evaluation along a run.
struct CurvePoint {
  std::int64_t samples = 0;  // whose gradients every stage has applied
  std::int64_t steps = 0;    // optimizer steps every stage has taken
  double train_loss = 0;     // mean loss of the microbatches applied since the previous point (NaN at 0)
  double val_loss = 0;       // on held-out samples, every stage's newest weights
  double val_accuracy = 0;
  double predicted_s = 0;  // the simulator's clock on the target setting when the point was reached
  double measured_s = 0;   // the executor's own compute time so far (one worker over all stages)
  // The replay's own pipelined time: when every stage had applied these samples, on the plan timed by each
  // op's measured CPU time (a device per core, transfers free). NaN in curves trained before it was kept.
  double pipelined_s = 0;
};

using StudyCurves = std::map<std::string, std::vector<CurvePoint>>;  // by run key

// Whether the schedule has no optimizer synchronisation (PipeDream, 2BW, async 1F1B, PACI).
bool is_asynchronous(const Study& study, const StudySchedule& schedule);

// The runs in order. Corrections other than none apply to asynchronous schedules only (a synchronous
// schedule has no delay to correct). With same_step_rate_flush, then a 1F1B-flush at each asynchronous
// schedule's step batch (B · per-step / m, m = per-step; once per such batch), every optimizer and seed.
// An optimizer whose rate is swept trains the schedules with lr_sweep at every rate and the others at the
// rate chosen from `curves` (chosen_learning_rates); until it can be chosen those runs are `deferred`.
std::vector<StudyRun> study_runs(const Study& study, const StudyCurves& curves = {});
// Every run a study's CSV may hold: the runs of a sweep's other schedules at every rate, none deferred.
std::vector<StudyRun> study_runs_at_every_rate(const Study& study);

// The runs a study compares: none deferred, a swept schedule at its optimizer's chosen rate only (every rate
// while none is chosen).
std::vector<StudyRun> comparison_runs(const Study& study, const StudyCurves& curves);

// The rate a swept optimizer trains the schedules without lr_sweep at, per (global batch, optimizer family):
// the index in study.optimizers of the rate whose swept runs (every swept schedule and seed, correction
// none) end at the lowest mean validation loss. Absent until those runs are all in `curves`.
std::map<std::pair<int, std::string>, std::size_t> chosen_learning_rates(const Study& study,
                                                                         const StudyCurves& curves);
// Samples a run trains on: the budget rounded up to whole batches.
std::int64_t run_samples(const Study& study, const StudyRun& run);

// Microbatches one optimizer step of the schedule applies (Schedule::microbatches_per_step) at the study's N.
int microbatches_per_step(const Study& study, const StudySchedule& schedule);

// What the study's learning rates are multiplied by for this schedule: 1, or (step batch / B) to the power
// 1/2 or 1 under learning_rate.scale_with_step_batch (the step batch from Schedule::microbatches_per_step).
double learning_rate_scale(const Study& study, const StudySchedule& schedule);

// The study's target setting for the run: its N, m, B and `batches` batches (the time axis's scenario).
Scenario target_scenario(const Study& study, const StudyRun& run, std::int64_t batches);
// The largest weight-version drift Δ (versions between a microbatch's forward and its gradient) and gradient
// staleness τ (steps between the version a gradient was computed on and the one it updates) any stage of the
// run's schedule sees: the simulator's, on the target setting; 1 and 1 for a delay mask.
struct DelayFigures {
  int drift_max = 0;
  int staleness_max = 0;
};
DelayFigures largest_delays(const Study& study, const StudyRun& run);

std::vector<CurvePoint> train_study_run(const Study& study, const StudyRun& run);

// Per stage, when each of its optimizer steps ended in `trace` (indexed by step; -1 where a step is not in
// it), for the first `stages` stages.
std::vector<std::vector<TimeNs>> step_end_times(const RunTrace& trace, int stages);
// When every stage had applied `microbatches` gradients: the latest end over stages s of the stage's first
// step k with applied_after_step[s][k] >= microbatches. In seconds. Throws std::logic_error when a stage
// never applies that many or its step has no end time.
double seconds_when_applied(const std::vector<std::vector<TimeNs>>& step_end_ns,
                            const std::vector<std::vector<std::int64_t>>& applied_after_step,
                            std::int64_t microbatches);

std::string curve_csv_header();
std::string curve_csv_rows(const Study& study, const StudyRun& run, const std::vector<CurvePoint>& points);
// The complete runs of a study's CSV that can be trusted: a run is complete when its last point is at its
// last sample, and trusted when every row of it parses, carries its run's hash, and its samples rise from 0
// with finite figures (train loss aside at 0 samples). Rows of an unfinished run, unknown runs and an
// interrupted last line are left out silently; anything else left out is said in `distrusted` ("run K: why").
StudyCurves read_complete_curves(const std::string& csv_text, const Study& study,
                                 std::vector<std::string>* distrusted = nullptr);

struct StudyProgress {
  int runs_total = 0;
  int runs_resumed = 0;                 // found complete in the CSV
  int runs_executed = 0;                // trained now
  std::vector<std::string> distrusted;  // runs of the CSV retrained, and why (read_complete_curves)
};

// Trains the runs the CSV lacks, rewriting it first with its complete runs only, and appending each run as it
// ends. `show_progress`: the progress bar on stderr (report/progress_bar.h: on a terminal, after a second).
// `jobs` runs train at once (one core each: the replay worker is single-threaded); the curves do not depend
// on it.
StudyProgress run_study(const Study& study, const std::string& csv_path, StudyCurves& curves,
                        bool show_progress, int jobs = 1);

}  // namespace pipesim
