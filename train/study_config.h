#pragma once
// A learning study (`pipesim train STUDY.yaml`): which schedules, optimizers, delay corrections, seeds and
// global batch sizes to train, for how many samples, against which targets, and on which target setting the
// simulator predicts the time axis. Format in README.md ("Learning studies").
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "executor/training_setup.h"
#include "sim/limits.h"

namespace pipesim {

struct StudySchedule {
  std::string name;                           // a registered schedule
  std::map<std::string, std::string> params;  // e.g. accumulation=4
  int microbatches = 1;                       // m
  int stages =
      0;  // N when the entry names its own (`stages: 4`; the model grows to N units if it must), else 0
  // The optimizers (their labels without " lr=...") it trains with when the entry names them, else empty:
  // all.
  std::vector<std::string> optimizers;
  // Stages (of the schedule's layout) that take a one-step-delayed gradient under a synchronous schedule:
  // their forwards and backwards read the weights one step old, the step updates the newest (empty: none).
  std::vector<bool> one_step_delayed;
  std::string delay_mask;  // as the study gave it: "first-half", "all" or "1,1,0,0"; "" for none
  bool baseline = false;   // added by same_step_rate_flush: labelled "step-rate-baseline"
  // Whether it trains at every rate of an optimizer whose `lr` is a list (a sweep). The others train at the
  // rate the swept schedules did best with (the paper's protocol: every schedule at the flush's best rate).
  // Default: synchronous schedules sweep, asynchronous ones do not.
  bool lr_sweep = false;
  // The delay corrections it trains with when the entry names its own (`corrections: [...]`), else empty
  // (the study's list).
  std::vector<executor::DelayCorrection> corrections;
  std::string label() const;    // "paci:accumulation=4 m=4", "1f1b-flush m=8 delay=first-half"
  std::string request() const;  // "paci:accumulation=4", as --schedules takes it
};

struct StudyOptimizer {
  std::string label;   // the study's name for it, e.g. "adamw", with " lr=R" when its rate is swept
  std::string family;  // the label without the rate: the entry of `optimizers` it came from
  bool swept = false;  // one rate of an entry whose `lr` is a list
  float learning_rate = 1e-3F;
  executor::OptimizerConfig config;
};

// One target: validation loss at or below `value`, or validation accuracy at or above it.
struct StudyTarget {
  enum class Metric { kLoss, kAccuracy };
  Metric metric = Metric::kLoss;
  double value = 0;
  std::string label() const;  // "val loss <= 2.4"
};

struct Study {
  std::string name;
  std::string source;
  std::string task = "teacher-mlp";  // model and data set; see study_tasks in study_config.cpp
  executor::ModelShape shape;
  std::string target_scenario;                // the setting whose predicted time is the time axis
  std::string target_scenario_where;          // "file:line: key 'target_setting.scenario'", for errors
  std::vector<std::string> target_overrides;  // --set style keys applied to it (e.g. hardware.profile=...)
  int stages = 8;
  std::int64_t sample_budget = 0;
  std::int64_t eval_every_samples = 0;  // one of the two grids (the other 0): samples or optimizer steps
  std::int64_t eval_every_steps = 0;
  int validation_samples = 512;
  std::vector<std::uint64_t> seeds;
  std::vector<int> global_batches;
  // How a schedule that steps on fewer samples than the global batch (PipeDream, PACI a < m, WPipe) scales
  // the optimizers' learning rates, which are for a step of B samples: none, or by (step batch / B)^(1/2)
  // (sqrt) or ^1 (linear).
  enum class LrScaling { kNone, kSqrt, kLinear };
  LrScaling lr_scaling = LrScaling::kNone;
  double warmup_fraction = 0.0;
  double floor_ratio = 0.1;
  std::vector<StudySchedule> schedules;
  std::vector<StudyOptimizer> optimizers;
  std::vector<executor::DelayCorrection> corrections;  // applied to asynchronous schedules only
  // Add a flush at each asynchronous schedule's step batch (study_runs): the same steps per sample.
  bool same_step_rate_flush = false;
  std::vector<StudyTarget> targets;  // the losses in the order given, then the accuracies; the first leads
  // Not from the file: the ceilings every run trains and is predicted under (the command line's --max-*).
  Limits limits;
};

// The pipeline depth a schedule entry trains at: its own `stages`, else the study's.
int stages_of(const Study& study, const StudySchedule& schedule);
// Whether the entry trains with that optimizer (its `optimizers:` list names the optimizer's family, or it
// has no list).
bool trains_with(const StudySchedule& schedule, const StudyOptimizer& optimizer);

// Reads and checks a study; `quick` applies its `quick:` section (smaller budget, fewer seeds...). Errors
// name the file, line and key.
Study load_study(const std::string& path, bool quick);
Study parse_study(const std::string& yaml_text, const std::string& source, bool quick);

// The tasks a study may name.
const std::vector<std::string>& study_tasks();

}  // namespace pipesim
