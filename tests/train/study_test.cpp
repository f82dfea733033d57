// Learning studies: the reader's checks, which runs a study makes, the table's figures on hand-made curves,
// the validation figures on a model whose answer is known, and a tiny study trained end to end that resumes
// after an interruption.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/errors.h"
#include "executor/sequential_training.h"
#include "executor/study/validation.h"
#include "executor/teacher_data.h"
#include "pipesim_source_dir.h"
#include "tests/test_util.h"
#include "train/study_config.h"
#include "train/study_report.h"
#include "train/study_runner.h"

namespace pipesim {
namespace {

// Two stages of the GPT-2 Medium setting, 64 samples in batches of 16: a few seconds in all.
constexpr const char* kTinyStudy = R"(name: tiny
task: teacher-mlp
model: {input_width: 8, width: 8, blocks: 0, classes: 3}
target_setting: {scenario: scenarios/paci/gpt2-medium-8stage.yaml}
stages: 2
global_batches: [16]
sample_budget: 64
eval_every_samples: 32
validation_samples: 32
seeds: [1, 2]
learning_rate: {warmup_fraction: 0.25, floor_ratio: 0.1}
optimizers:
  - {name: adamw, lr: 0.01}
schedules:
  - {name: 1f1b-flush, microbatches: 2}
  - {name: pipedream-2bw, microbatches: 2}
corrections: [none, error-feedback]
targets: {loss: 5.0}
quick: {seeds: [3]}
)";

std::string expect_input_error(const std::string& text) {
  try {
    parse_study(text, "s.yaml", false);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error for:\n" << text;
  return "";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(StudyConfig, SoapReadsItsPreconditionerSettingsWhichOtherOptimizersRefuse) {
  const Study study = parse_study(
      replaced(kTinyStudy, "{name: adamw, lr: 0.01}", "{name: soap, lr: 0.01, precondition_frequency: 3}"),
      "s.yaml", false);
  ASSERT_EQ(study.optimizers.size(), 1U);
  EXPECT_EQ(study.optimizers[0].config.kind, executor::OptimizerKind::kSoap);
  EXPECT_EQ(study.optimizers[0].config.precondition_frequency, 3);
  EXPECT_FLOAT_EQ(study.optimizers[0].config.beta1, 0.95F);  // the authors' betas
  const std::string error = expect_input_error(
      replaced(kTinyStudy, "{name: adamw, lr: 0.01}", "{name: adamw, lr: 0.01, shampoo_beta: 0.9}"));
  EXPECT_NE(error.find("optimizers[0].shampoo_beta"), std::string::npos) << error;
  EXPECT_NE(error.find("soap only"), std::string::npos) << error;
}

TEST(StudyConfig, ErrorsNameTheFileLineAndKey) {
  // A schedule entry's key that is not a name (a list, here) is an input error, not a crash.
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "{name: pipedream-2bw, microbatches: 2}",
                                        "{name: pipedream-2bw, [adamw]: 2}"))
                .find("schedules[1]"),
            std::string::npos);
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "task: teacher-mlp", "task: gpt")).find("s.yaml:2"),
            std::string::npos);
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "task: teacher-mlp", "task: gpt")).find("teacher-mlp"),
            std::string::npos);
  const std::string bad_optimizer = expect_input_error(replaced(kTinyStudy, "name: adamw", "name: adam"));
  EXPECT_NE(bad_optimizer.find("optimizers[0].name"), std::string::npos);
  EXPECT_NE(bad_optimizer.find("muon"), std::string::npos);
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "global_batches: [16]", "global_batches: [15]"))
                .find("global_batches[0]"),
            std::string::npos);
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "stages: 2", "stages: 2\nstagse: 3")).find("stagse"),
            std::string::npos);
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "targets: {loss: 5.0}", "targets: {}")).find("targets"),
            std::string::npos);
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "targets: {loss: 5.0}", "targets: {loss: []}"))
                .find("key 'targets.loss': expected a number or a non-empty list of numbers"),
            std::string::npos);
  // One evaluation grid: samples or optimizer steps, not both and not neither.
  EXPECT_NE(expect_input_error(
                replaced(kTinyStudy, "eval_every_samples: 32", "eval_every_samples: 32\neval_every_steps: 2"))
                .find("exactly one of eval_every_samples"),
            std::string::npos);
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "eval_every_samples: 32\n", "")).find("exactly one of"),
            std::string::npos);
  EXPECT_EQ(
      parse_study(replaced(kTinyStudy, "eval_every_samples: 32", "eval_every_steps: 2"), "s.yaml", false)
          .eval_every_steps,
      2);
  // An optimizer without its learning rate is located, not an internal error.
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "{name: adamw, lr: 0.01}", "{name: adamw}"))
                .find("key 'optimizers[0].lr': expected a learning rate"),
            std::string::npos);
  // A syntax error reads as in every YAML file pipesim reads (YamlReader::load).
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "stages: 2", "stages: [2")).find("s.yaml:"),
            std::string::npos);
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "stages: 2", "stages: [2")).find(": not valid YAML: "),
            std::string::npos);
  // Names from a fixed set say what is allowed and suggest the closest; a schedule is checked where it is
  // read.
  EXPECT_EQ(expect_input_error(replaced(kTinyStudy, "task: teacher-mlp", "task: teacher-mpl")),
            "s.yaml:2: key 'task': expected one of 'teacher-mlp', 'austen-gpt', 'snippet-gpt', got "
            "'teacher-mpl'; did you mean 'teacher-mlp'?");
  EXPECT_EQ(expect_input_error(
                replaced(kTinyStudy, "corrections: [none, error-feedback]", "corrections: [none, feedback]")),
            "s.yaml:17: key 'corrections[1]': expected one of 'none', 'error-feedback', 'weight-prediction', "
            "got 'feedback'");
  EXPECT_EQ(expect_input_error(replaced(kTinyStudy, "{name: 1f1b-flush,", "{name: 1f1b-flsh,")),
            "s.yaml:15: key 'schedules[0].name': expected a registered schedule (`pipesim schedules` lists "
            "them) or csv:PATH, got '1f1b-flsh'; did you mean '1f1b-flush'?");
  EXPECT_NE(parse_study(kTinyStudy, "s.yaml", false)
                .target_scenario_where.find("s.yaml:4: key 'target_setting.scenario'"),
            std::string::npos);
  // An empty target setting is located, not yaml-cpp's InvalidNode (a "pipesim bug" at the top).
  EXPECT_EQ(
      expect_input_error(replaced(kTinyStudy, "{scenario: scenarios/paci/gpt2-medium-8stage.yaml}", "{}")),
      "s.yaml:4: key 'target_setting.scenario': expected a scenario key (the target setting's scenario "
      "file), got {}");
  // The name is a file name under --out, never a path out of it.
  for (const char* name : {"/abs/x", "../../x", "a/b", "..", "back\\slash"}) {
    const std::string error =
        expect_input_error(replaced(kTinyStudy, "name: tiny", std::string("name: '") + name + "'"));
    EXPECT_NE(error.find("key 'name': expected a file name without '/'"), std::string::npos)
        << name << ": " << error;
  }
}

TEST(StudyConfig, QuickReplacesItsKeysAndCorrectionsSkipSynchronousSchedules) {
  const Study full = parse_study(kTinyStudy, "s.yaml", false);
  const Study quick = parse_study(kTinyStudy, "s.yaml", true);
  EXPECT_EQ(full.seeds, (std::vector<std::uint64_t>{1, 2}));
  EXPECT_EQ(quick.seeds, (std::vector<std::uint64_t>{3}));
  // 1F1B-flush: none only; 2BW: none and error feedback; times 2 seeds.
  const std::vector<StudyRun> runs = study_runs(full);
  ASSERT_EQ(runs.size(), 6U);
  EXPECT_EQ(runs[0].key(), "B=16 1f1b-flush m=2 adamw none seed=1");
  EXPECT_EQ(runs[5].key(), "B=16 pipedream-2bw m=2 adamw error-feedback seed=2");
  EXPECT_EQ(run_samples(full, runs[0]), 64);
}

TEST(StudyConfig, ShippedStudiesReadInFullAndQuick) {
  for (const char* name : {"paci-scaled", "one-step-delay", "paci-long"}) {
    const std::string path = std::string(PIPESIM_SOURCE_DIR) + "/share/studies/" + name + ".yaml";
    const Study full = load_study(path, false);
    const Study quick = load_study(path, true);
    EXPECT_EQ(full.stages, 8) << name;
    EXPECT_EQ(full.seeds.size(), 3U) << name;
    EXPECT_LT(quick.sample_budget, full.sample_budget) << name;
    EXPECT_FALSE(study_runs(quick).empty()) << name;
  }
}

std::vector<CurvePoint> curve(const std::vector<std::pair<double, double>>& loss_and_time) {
  std::vector<CurvePoint> points;
  std::int64_t samples = 0;
  for (const auto& [loss, time] : loss_and_time) {
    points.push_back({samples, samples / 16, 0, loss, 1 - loss / 4, time, time / 2});
    samples += 32;
  }
  return points;
}

TEST(StudyReport, TimeToTargetSpreadAndSpeedupByHand) {
  const Study study = parse_study(kTinyStudy, "s.yaml", false);
  const std::vector<StudyRun> runs = study_runs(study);
  StudyCurves curves;
  // Points every 32 samples (2 steps of B = 16). Flush: seed 1 meets loss <= 5 exactly at its second point
  // (32 samples, t = 2); seed 2 crosses halfway from 6 to 4 between its second and third points (48
  // samples, 3 steps, t = 3, measured 1.5).
  curves[runs[0].key()] = curve({{6, 0}, {5, 2}, {4, 3}});
  curves[runs[1].key()] = curve({{8, 0}, {6, 2}, {4, 4}});
  // 2BW without correction: seed 1 at t = 1.5; seed 2 halfway from 6 to 4 at the first step (16 samples,
  // t = 0.75). With error feedback: seed 1 never, seed 2 at t = 1.
  curves[runs[2].key()] = curve({{6, 0}, {5, 1.5}, {4, 2}});
  curves[runs[3].key()] = curve({{6, 0}, {4, 1.5}, {3, 2}});
  curves[runs[4].key()] = curve({{6, 0}, {6, 1}, {6, 2}});
  curves[runs[5].key()] = curve({{6, 0}, {5, 1}, {5, 2}});
  const std::vector<GroupSummary> groups = summarize_study(study, curves);
  ASSERT_EQ(groups.size(), 3U);
  const TargetSummary& flush = groups[0].targets.at(0);
  EXPECT_EQ(flush.reached, 2);
  EXPECT_DOUBLE_EQ(flush.samples_to_target, (32 + 48) / 2.0);
  EXPECT_DOUBLE_EQ(flush.steps_to_target, (2 + 3) / 2.0);
  EXPECT_DOUBLE_EQ(flush.predicted_s_to_target, (2 + 3) / 2.0);
  EXPECT_DOUBLE_EQ(flush.measured_s_to_target, (1 + 1.5) / 2.0);
  // Per point the seeds differ by 2, 1, 0: sample variances 2, 0.5, 0; RMS sqrt(2.5 / 3).
  EXPECT_DOUBLE_EQ(groups[0].loss_spread, std::sqrt(2.5 / 3));
  EXPECT_DOUBLE_EQ(groups[0].final_val_loss, 4.0);
  EXPECT_DOUBLE_EQ(flush.speedup_over_fastest_flush, 1.0);
  EXPECT_DOUBLE_EQ(groups[1].targets[0].samples_to_target, (32 + 16) / 2.0);
  EXPECT_DOUBLE_EQ(groups[1].targets[0].predicted_s_to_target, (1.5 + 0.75) / 2);
  EXPECT_DOUBLE_EQ(groups[1].targets[0].speedup_over_fastest_flush, 2.5 / 1.125);
  EXPECT_EQ(groups[2].targets[0].reached, 1);
  EXPECT_DOUBLE_EQ(groups[2].targets[0].predicted_s_to_target, 1.0);
  EXPECT_TRUE(std::isnan(groups[2].targets[0].speedup_over_fastest_flush));  // not every seed reached
  const std::string table = format_study_table(study, groups);
  EXPECT_NE(table.find("| 16 | pipedream-2bw m=2 | adamw | none | 2/2 | 24 | 2 | 1.125 | 0.562 |"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("Predicted seconds to each target"), std::string::npos);  // one target: one table
}

TEST(StudyReport, EveryTargetHasItsOwnCrossingAndColumn) {
  const Study study =
      parse_study(replaced(kTinyStudy, "targets: {loss: 5.0}", "targets: {loss: [5.0, 4.0], accuracy: 0.2}"),
                  "s.yaml", false);
  ASSERT_EQ(study.targets.size(), 3U);
  EXPECT_EQ(study.targets[1].label(), "val loss <= 4");
  EXPECT_EQ(study.targets[2].label(), "val accuracy >= 0.2");
  // Accuracy rises: 1 - loss / 4 is 0, 0.25, 0.5 at losses 4, 3, 2; it reaches 0.2 4/5 of the way from the
  // first point to the second.
  const std::vector<CurvePoint> c = curve({{4, 0}, {3, 10}, {2, 20}});
  const std::optional<TargetCrossing> accuracy = first_crossing(c, study.targets[2]);
  ASSERT_TRUE(accuracy.has_value());
  EXPECT_DOUBLE_EQ(accuracy->samples, 0.8 * 32);
  EXPECT_DOUBLE_EQ(accuracy->predicted_s, 8.0);
  // A curve that starts at the target crosses at its first point; one that never meets it does not.
  EXPECT_DOUBLE_EQ(first_crossing(c, study.targets[0])->samples, 0.0);
  EXPECT_FALSE(first_crossing(curve({{6, 0}, {5.5, 1}}), study.targets[0]).has_value());
  const std::vector<StudyRun> runs = study_runs(study);
  StudyCurves curves;
  for (const StudyRun& run : runs) curves[run.key()] = curve({{6, 0}, {5, 2}, {3, 4}});
  const std::vector<GroupSummary> groups = summarize_study(study, curves);
  ASSERT_EQ(groups[0].targets.size(), 3U);
  EXPECT_DOUBLE_EQ(groups[0].targets[1].predicted_s_to_target, 3.0);  // 5 -> 3 reaches 4 halfway
  const std::string table = format_study_table(study, groups);
  EXPECT_NE(
      table.find("| B | schedule | optimizer | correction | val loss <= 5 | val loss <= 4 | val accuracy "
                 ">= 0.2 |"),
      std::string::npos)
      << table;
  EXPECT_NE(table.find("| 16 | 1f1b-flush m=2 | adamw | none | 2.000 (1.00x) | 3.000 (1.00x) |"),
            std::string::npos)
      << table;
}

TEST(StudyValidation, AZeroModelScoresLogClassesAndThePriorOfClassZero) {
  executor::TrainingSetup setup;
  setup.shape = {.input_width = 6, .width = 4, .blocks = 1, .classes = 3};
  setup.samples_per_microbatch = 8;
  const executor::StagedModel model = executor::build_staged_model(setup, 3);
  std::vector<std::vector<float>> zeros;
  for (const auto& p : model.initial_parameters) zeros.emplace_back(p.size(), 0.0F);
  // Zero weights: every logit is 0, the loss ln 3, and the argmax is class 0.
  const executor::Evaluation e = executor::evaluate(model, zeros, setup, 40);
  EXPECT_NEAR(e.loss, std::log(3.0), 1e-6);
  // 40 samples: a chunk of 32 and one of 8, drawn with the validation seed.
  int zero_labels = 0;
  for (const auto& [j, n] : {std::pair{0, 32}, std::pair{1, 8}}) {
    const auto mb =
        executor::teacher_microbatch<float>(setup.seed, 2'000'000'000, j, n, 6, 3, executor::kValidationSeed);
    for (int label : mb.labels) zero_labels += label == 0 ? 1 : 0;
  }
  EXPECT_DOUBLE_EQ(e.accuracy, zero_labels / 40.0);
}

// The held-out set does not move with the microbatch size, and for a data set not with the seed either (the
// teacher task's seed picks its teacher: its inputs stay, its labels follow).
TEST(StudyValidation, TheHeldOutSetIsTheSameForEveryMicrobatchSizeAndSeed) {
  executor::TrainingSetup setup;
  setup.shape = {.input_width = 6, .width = 4, .blocks = 1, .classes = 3};
  setup.samples_per_microbatch = 4;
  const executor::StagedModel model = executor::build_staged_model(setup, 2);
  const executor::Evaluation small = executor::evaluate(model, model.initial_parameters, setup, 64);
  setup.samples_per_microbatch = 16;
  const executor::Evaluation large = executor::evaluate(model, model.initial_parameters, setup, 64);
  EXPECT_EQ(small.loss, large.loss);
  EXPECT_EQ(small.accuracy, large.accuracy);
  const auto seed1 = executor::teacher_microbatch<float>(1, 7, 0, 8, 6, 3, executor::kValidationSeed);
  const auto seed2 = executor::teacher_microbatch<float>(2, 7, 0, 8, 6, 3, executor::kValidationSeed);
  EXPECT_EQ(seed1.inputs.values, seed2.inputs.values);
  EXPECT_NE(executor::teacher_microbatch<float>(1, 7, 0, 8, 6, 3).inputs.values,
            executor::teacher_microbatch<float>(2, 7, 0, 8, 6, 3).inputs.values);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The CSV without the `count` columns before run_hash, header included: 2 drops measured_s and pipelined_s,
// the only ones that depend on the machine (wall-clock and CPU times differ between runs); 1 drops
// pipelined_s, giving the file pipesim wrote before it kept that column.
std::string without_columns_before_hash(const std::string& csv, int count) {
  std::stringstream in(csv);
  std::string line, out;
  while (std::getline(in, line)) {
    const std::size_t hash = line.rfind(',');
    std::size_t cut = hash;
    for (int i = 0; i < count; ++i) cut = line.rfind(',', cut - 1);
    out += line.substr(0, cut) + line.substr(hash) + "\n";
  }
  return out;
}
std::string without_measured(const std::string& csv) {
  return without_columns_before_hash(csv, 2);
}

// Two stages: stage 1 steps at 10 and 30 ns, stage 2 at 20 and 25 ns (its second step ends first).
TEST(StudyRunner, APointsPipelinedTimeIsWhenEveryStageHadAppliedItsSamples) {
  RunTrace trace;
  trace.ops = {{optimizer_step(0, 0, false), 0, 0, 5, 10},
               {optimizer_step(1, 0, false), 1, 0, 15, 20},
               {forward(0, 4), 0, 1, 10, 40},
               {optimizer_step(1, 1, false), 1, 1, 22, 25},
               {optimizer_step(0, 1, false), 0, 1, 28, 30}};
  // Stage 1 applies 2 then 4 microbatches; stage 2 one, then 4 (a run-time rule's uneven steps).
  const std::vector<std::vector<std::int64_t>> applied{{2, 4}, {1, 4}};
  const std::vector<std::vector<TimeNs>> ends = step_end_times(trace, 2);
  EXPECT_EQ(ends, (std::vector<std::vector<TimeNs>>{{10, 30}, {20, 25}}));
  EXPECT_DOUBLE_EQ(seconds_when_applied(ends, applied, 1), 20e-9);  // stage 1's step 0, stage 2's step 0
  EXPECT_DOUBLE_EQ(seconds_when_applied(ends, applied, 2), 25e-9);  // stage 2 needs its second step
  EXPECT_DOUBLE_EQ(seconds_when_applied(ends, applied, 3), 30e-9);
  EXPECT_DOUBLE_EQ(seconds_when_applied(ends, applied, 4), 30e-9);
  EXPECT_THROW(seconds_when_applied(ends, applied, 5), std::logic_error);  // never applied
  trace.ops.pop_back();
  EXPECT_THROW(seconds_when_applied(step_end_times(trace, 2), applied, 3),
               std::logic_error);  // the step is not in the trace
}

TEST(StudyRunner, TrainsEveryRunAndResumesAnInterruptedStudyFromItsCsv) {
  const Study study = parse_study(kTinyStudy, "s.yaml", false);
  const std::string dir = testing::TempDir();
  const std::string full_path = dir + "/study_full.csv";
  std::filesystem::remove(full_path);
  StudyCurves curves;
  const StudyProgress first = run_study(study, full_path, curves, false);
  EXPECT_EQ(first.runs_executed, 6);
  for (const auto& [key, points] : curves) {
    ASSERT_EQ(points.size(), 3U) << key;  // 0, 32 and 64 samples
    EXPECT_EQ(points.back().samples, 64);
    EXPECT_TRUE(std::isnan(points.front().train_loss));
    EXPECT_EQ(points.front().pipelined_s, 0);
    for (std::size_t i = 1; i < points.size(); ++i) {
      EXPECT_GT(points[i].predicted_s, points[i - 1].predicted_s) << key;
      EXPECT_GT(points[i].pipelined_s, points[i - 1].pipelined_s) << key;
      EXPECT_TRUE(std::isfinite(points[i].val_loss)) << key;
    }
  }
  // A file written before pipelined_s was kept resumes whole, its pipelined times unknown (NaN, shown '-').
  {
    std::vector<std::string> why;
    const StudyCurves old =
        read_complete_curves(without_columns_before_hash(read_text(full_path), 1), study, &why);
    EXPECT_TRUE(why.empty()) << why.front();
    ASSERT_EQ(old.size(), 6U);
    for (const auto& [key, points] : old) {
      EXPECT_TRUE(std::isnan(points.back().pipelined_s)) << key;
      EXPECT_NEAR(points.back().val_loss, curves.at(key).back().val_loss, 1e-7) << key;  // 9 digits
    }
    const std::string table = format_study_table(study, summarize_study(study, old));
    EXPECT_NE(table.find("pipelined s"), std::string::npos);
  }
  // Interrupt: keep the rows of the first four runs and half a line of the fifth.
  const std::string full = read_text(full_path);
  std::size_t cut = 0;
  for (int line = 0; line < 1 + 4 * 3; ++line) cut = full.find('\n', cut) + 1;
  const std::string resumed_path = dir + "/study_resumed.csv";
  {
    std::ofstream out(resumed_path, std::ios::trunc);
    out << full.substr(0, cut) << full.substr(cut, 40);
  }
  StudyCurves resumed_curves;
  struct stat before {};
  ASSERT_EQ(::stat(resumed_path.c_str(), &before), 0);
  const StudyProgress second = run_study(study, resumed_path, resumed_curves, false);
  // The rewrite went to a new file renamed over the old one (a kill during it leaves the old file whole), not
  // a truncation in place.
  struct stat after {};
  ASSERT_EQ(::stat(resumed_path.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino);
  EXPECT_EQ(second.runs_resumed, 4);
  EXPECT_EQ(second.runs_executed, 2);
  EXPECT_EQ(without_measured(read_text(resumed_path)), without_measured(full));
  // A complete CSV: nothing left to train.
  EXPECT_EQ(run_study(study, resumed_path, resumed_curves, false).runs_executed, 0);
}

// Resume only what is the same run: a changed setting or a damaged file retrains the runs it touches, and
// says which and why.
TEST(StudyRunner, ResumesOnlyRunsWithTheSameSettingsAndTrustworthyRows) {
  const Study study = parse_study(kTinyStudy, "s.yaml", false);
  const std::string dir = testing::TempDir();
  const std::string path = dir + "/study_hash.csv";
  std::filesystem::remove(path);
  StudyCurves curves;
  run_study(study, path, curves, false);
  const std::string full = read_text(path);
  std::vector<std::string> why;
  EXPECT_EQ(read_complete_curves(full, study, &why).size(), 6U);
  EXPECT_TRUE(why.empty());
  // A changed target setting changes the predicted seconds: the file's text is part of the hash.
  EXPECT_TRUE(
      read_complete_curves(
          full, parse_study(replaced(kTinyStudy, "gpt2-medium-8stage.yaml", "example.yaml"), "s.yaml", false))
          .empty());
  // Another learning rate: same keys, other runs. Nothing is resumed, and each run says why.
  const Study other_lr = parse_study(replaced(kTinyStudy, "lr: 0.01", "lr: 0.02"), "s.yaml", false);
  why.clear();
  EXPECT_TRUE(read_complete_curves(full, other_lr, &why).empty());
  ASSERT_EQ(why.size(), 6U);
  EXPECT_NE(why[0].find("settings changed since it was trained"), std::string::npos) << why[0];
  // So do the validation set, the evaluation grid and the model.
  for (const auto& [from, to] :
       {std::pair{"validation_samples: 32", "validation_samples: 16"},
        std::pair{"eval_every_samples: 32", "eval_every_samples: 16"}, std::pair{"blocks: 0", "blocks: 1"},
        std::pair{"warmup_fraction: 0.25", "warmup_fraction: 0.5"}}) {
    EXPECT_TRUE(
        read_complete_curves(full, parse_study(replaced(kTinyStudy, from, to), "s.yaml", false)).empty())
        << to;
  }
  // A corrupt middle row distrusts its run only; NaN in a figure, a duplicated run and 12 cells likewise.
  std::string damaged = full;
  const std::size_t second_row = damaged.find('\n', damaged.find('\n') + 1) + 1;
  damaged.replace(damaged.find(",1.", second_row), 3, ",x.");
  why.clear();
  EXPECT_EQ(read_complete_curves(damaged, study, &why).size(), 5U);
  ASSERT_EQ(why.size(), 1U);
  EXPECT_NE(why[0].find("not a number"), std::string::npos) << why[0];
  // A run whose middle point was dropped (its first and last rows kept, so it looks complete) is retrained,
  // saying why.
  std::string dropped = full;
  dropped.erase(second_row, dropped.find('\n', second_row) + 1 - second_row);
  why.clear();
  EXPECT_EQ(read_complete_curves(dropped, study, &why).size(), 5U);
  ASSERT_EQ(why.size(), 1U);
  EXPECT_NE(why[0].find("a point is missing before the one at 64 samples"), std::string::npos) << why[0];
  const std::size_t first_row = full.find('\n') + 1;
  const std::string first_run = full.substr(first_row, full.find("seed=2") - first_row);
  why.clear();
  EXPECT_EQ(read_complete_curves(full + first_run.substr(0, first_run.rfind('\n', first_run.size() - 2) + 1),
                                 study, &why)
                .size(),
            5U);
  EXPECT_EQ(why.size(), 1U);
  // Another study's file, or one without a header: nothing resumed, and said.
  why.clear();
  EXPECT_TRUE(read_complete_curves(full.substr(first_row), study, &why).empty());
  EXPECT_EQ(why.size(), 1U);
  // Retraining gives the rows a fresh study writes (the retrained run's rows last).
  StudyCurves again;
  {
    std::ofstream out(path, std::ios::trunc);
    out << damaged;
  }
  const StudyProgress progress = run_study(study, path, again, false);
  EXPECT_EQ(progress.runs_resumed, 5);
  EXPECT_EQ(progress.runs_executed, 1);
  EXPECT_EQ(progress.distrusted.size(), 1U);
  const auto sorted_lines = [](const std::string& text) {
    std::vector<std::string> lines;
    std::stringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    std::sort(lines.begin(), lines.end());
    return lines;
  };
  EXPECT_EQ(sorted_lines(without_measured(read_text(path))), sorted_lines(without_measured(full)));
  // Through a symlink the target is resumed and rewritten, the link kept; a FIFO is refused, never replaced.
  const std::string link = dir + "/study_link.csv";
  std::filesystem::remove(link);
  std::filesystem::create_symlink(path, link);
  StudyCurves linked;
  EXPECT_EQ(run_study(study, link, linked, false).runs_resumed, 6);
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  // A dangling link is kept as well: its target is created and the study trained into it.
  const std::string dangling = dir + "/study_dangling.csv";
  std::filesystem::remove(dangling);
  std::filesystem::remove(dir + "/study_dangling_target.csv");
  std::filesystem::create_symlink("study_dangling_target.csv", dangling);
  StudyCurves from_dangling;
  EXPECT_EQ(run_study(study, dangling, from_dangling, false).runs_executed, 6);
  EXPECT_TRUE(std::filesystem::is_symlink(dangling));
  EXPECT_EQ(sorted_lines(without_measured(read_text(dir + "/study_dangling_target.csv"))),
            sorted_lines(without_measured(full)));
  const std::string fifo = dir + "/study_fifo.csv";
  std::filesystem::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_THROW(run_study(study, fifo, linked, false), InputError);
  EXPECT_TRUE(std::filesystem::is_fifo(fifo));
}

// Several jobs train the same curves (rows in completion order, so compared per run), and a failing run stops
// the study with its error instead of losing it in a thread.
TEST(StudyRunner, JobsTrainTheSameCurvesAsOneAndPassOnAFailure) {
  const Study study = parse_study(kTinyStudy, "s.yaml", false);
  const std::string dir = testing::TempDir();
  StudyCurves one, three;
  std::filesystem::remove(dir + "/study_jobs1.csv");
  std::filesystem::remove(dir + "/study_jobs3.csv");
  run_study(study, dir + "/study_jobs1.csv", one, false, 1);
  EXPECT_EQ(run_study(study, dir + "/study_jobs3.csv", three, false, 3).runs_executed, 6);
  ASSERT_EQ(one.size(), three.size());
  for (const auto& [key, points] : one) {
    ASSERT_TRUE(three.contains(key)) << key;
    ASSERT_EQ(points.size(), three.at(key).size()) << key;
    for (std::size_t i = 0; i < points.size(); ++i) {
      EXPECT_EQ(points[i].samples, three.at(key)[i].samples);
      EXPECT_EQ(points[i].val_loss, three.at(key)[i].val_loss) << key;  // bit-identical numerics
    }
  }
  StudyCurves resumed;
  EXPECT_EQ(run_study(study, dir + "/study_jobs3.csv", resumed, false, 2).runs_resumed, 6);

  Study broken = study;
  broken.target_scenario = dir + "/no-such-scenario.yaml";
  std::filesystem::remove(dir + "/study_broken.csv");
  StudyCurves none;
  EXPECT_THROW(run_study(broken, dir + "/study_broken.csv", none, false, 2), InputError);
}

// Issue 47: a study of a million stages grew its model to a block per stage, and searched the blocks' split,
// before any estimate: 24 GB before the kernel stopped it. The run's estimate now comes first.
TEST(StudyRunner, AMillionStagesAreRefusedBeforeTheModelIsBuilt) {
  // The flush alone: 2BW's own rule (m >= N) would refuse it first, whichever run the runner takes first.
  const Study study = parse_study(replaced(replaced(kTinyStudy, "stages: 2", "stages: 1000000"),
                                           "  - {name: pipedream-2bw, microbatches: 2}\n", ""),
                                  "s.yaml", false);
  const std::string path = testing::TempDir() + "/study_million.csv";
  std::filesystem::remove(path);
  StudyCurves curves;
  const std::string message = test::input_error_of([&] { run_study(study, path, curves, false); });
  EXPECT_NE(message.find("s.yaml: 1f1b-flush m=2 at N = 1000000: training this model would need about"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("above the 4 GB ceiling"), std::string::npos) << message;
  EXPECT_NE(message.find("--max-memory-gb"), std::string::npos) << message;
}

// The character GPT on the repository's snippet: per-position predictions, so the accuracy is a fraction of
// positions (in [0, 1], not a count per sample), and 512 samples of training lower the held-out loss.
TEST(StudyRunner, TheSnippetGptTaskTrainsTheCharacterModelOnHeldOutText) {
  std::string text = replaced(kTinyStudy, "task: teacher-mlp", "task: snippet-gpt");
  text = replaced(text, "model: {input_width: 8, width: 8, blocks: 0, classes: 3}",
                  "model: {width: 16, blocks: 1}");
  text = replaced(text, "sample_budget: 64", "sample_budget: 512");
  text = replaced(text, "eval_every_samples: 32", "eval_every_samples: 256");
  const Study study = parse_study(text, "s.yaml", false);
  const std::vector<CurvePoint> points = train_study_run(study, study_runs(study).front());
  ASSERT_EQ(points.size(), 3U);  // 0, 256 and 512 samples
  for (const CurvePoint& p : points) {
    EXPECT_TRUE(std::isfinite(p.val_loss));
    EXPECT_GE(p.val_accuracy, 0.0);
    EXPECT_LE(p.val_accuracy, 1.0);
  }
  EXPECT_LT(points.back().val_loss, points.front().val_loss);
}

// The setup train_study_run makes for a run of kTinyStudy (B = 16, m = 2, two stages, 64 samples).
executor::TrainingSetup tiny_study_setup(const Study& study, const StudyRun& run) {
  executor::TrainingSetup setup;
  setup.shape = study.shape;
  setup.shape.blocks = executor::blocks_for_stages(setup.shape, 2);
  setup.samples_per_microbatch = 8;
  setup.microbatches_per_batch = 2;
  setup.learning_rate = run.optimizer.learning_rate;
  setup.optimizer = run.optimizer.config;
  setup.seed = run.seed;
  setup.lr_schedule = {.warmup_fraction = 0.25, .floor_ratio = 0.1, .total_microbatches = 8};
  return setup;
}

// A point is taken after its step, on the fixed held-out set: a flush's curve after k steps evaluates
// exactly the weights of k steps of plain training (taken at the batch's last forward, before its step, the
// first point after 0 showed the untrained model again).
TEST(StudyRunner, AFlushPointEvaluatesTheWeightsAfterItsStep) {
  const Study study =
      parse_study(replaced(kTinyStudy, "eval_every_samples: 32", "eval_every_steps: 1"), "s.yaml", false);
  const StudyRun run = study_runs(study).front();  // 1f1b-flush, m = 2, B = 16, seed 1
  ASSERT_EQ(run.schedule.name, "1f1b-flush");
  const std::vector<CurvePoint> points = train_study_run(study, run);
  ASSERT_EQ(points.size(), 5U);  // 0 to 4 steps of 16 samples
  const executor::TrainingSetup setup = tiny_study_setup(study, run);
  const executor::StagedModel model = executor::build_staged_model(setup, 2);
  for (int k = 1; k <= 4; ++k) {
    EXPECT_EQ(points[k].samples, 16 * k);
    EXPECT_EQ(points[k].steps, k);
    const executor::Evaluation e =
        executor::evaluate(model, executor::train_sequentially(setup, 2, k), setup, study.validation_samples);
    EXPECT_EQ(points[k].val_loss, e.loss) << k << " steps";
  }
  EXPECT_NE(points[1].val_loss, points[0].val_loss);
}

// A delay mask delays chosen stages of a synchronous schedule: the flush with its first half delayed trains
// to the weights of plain training with that half's gradients one step old, evaluated after each step.
TEST(StudyRunner, ADelayMaskDelaysItsStagesOnly) {
  std::string text = replaced(kTinyStudy, "eval_every_samples: 32", "eval_every_steps: 1");
  text = replaced(text, "{name: 1f1b-flush, microbatches: 2}",
                  "{name: 1f1b-flush, microbatches: 2, delay_mask: first-half}");
  const Study study = parse_study(text, "s.yaml", false);
  const StudyRun run = study_runs(study).front();
  ASSERT_EQ(run.schedule.one_step_delayed, (std::vector<bool>{true, false}));
  EXPECT_EQ(run.key(), "B=16 1f1b-flush m=2 delay=first-half adamw none seed=1");
  const std::vector<CurvePoint> points = train_study_run(study, run);
  ASSERT_EQ(points.size(), 5U);
  const executor::TrainingSetup setup = tiny_study_setup(study, run);
  const executor::StagedModel model = executor::build_staged_model(setup, 2);
  for (int k = 1; k <= 4; ++k) {
    const auto delayed = executor::train_sequentially(setup, 2, k, {true, false});
    EXPECT_EQ(points[k].val_loss, executor::evaluate(model, delayed, setup, study.validation_samples).loss)
        << k << " steps";
  }
  // Not the synchronous curve: by the second step the delayed half has read a stale version.
  const auto synchronous = executor::train_sequentially(setup, 2, 4);
  EXPECT_NE(points[4].val_loss, executor::evaluate(model, synchronous, setup, study.validation_samples).loss);
}

// A schedule that steps on fewer samples than B gets its learning rate scaled by its step batch over B:
// PipeDream steps per microbatch (1 of m), PACI per a, WPipe per N; a flush and 2BW per batch.
TEST(StudyConfig, LearningRatesScaleWithTheStepBatchWhenAsked) {
  std::string text = replaced(kTinyStudy, "{warmup_fraction: 0.25, floor_ratio: 0.1}",
                              "{warmup_fraction: 0.25, floor_ratio: 0.1, scale_with_step_batch: linear}");
  text = replaced(text, "  - {name: pipedream-2bw, microbatches: 2}\n",
                  "  - {name: pipedream-2bw, microbatches: 2}\n  - {name: pipedream, microbatches: 8}\n"
                  "  - {name: paci, accumulation: 2, microbatches: 8}\n  - {name: wpipe, microbatches: 4}\n");
  text = replaced(text, "global_batches: [16]", "global_batches: [32]");
  const Study linear = parse_study(text, "s.yaml", false);
  ASSERT_EQ(linear.schedules.size(), 5U);
  const double expected[] = {1.0, 1.0, 1.0 / 8, 2.0 / 8,
                             2.0 / 4};  // flush, 2bw, pipedream, paci, wpipe (N = 2)
  for (std::size_t i = 0; i < 5; ++i)
    EXPECT_DOUBLE_EQ(learning_rate_scale(linear, linear.schedules[i]), expected[i])
        << linear.schedules[i].label();
  const Study root = parse_study(
      replaced(text, "scale_with_step_batch: linear", "scale_with_step_batch: sqrt"), "s.yaml", false);
  EXPECT_DOUBLE_EQ(learning_rate_scale(root, root.schedules[2]), std::sqrt(1.0 / 8));
  const Study none = parse_study(replaced(text, ", scale_with_step_batch: linear", ""), "s.yaml", false);
  EXPECT_DOUBLE_EQ(learning_rate_scale(none, none.schedules[2]), 1.0);
  // The scaled runs are other runs: their hashes differ; the table says the rates were scaled.
  const StudyRun scaled = study_runs(linear)[3];
  EXPECT_NE(scaled.hash(linear), scaled.hash(none));
  EXPECT_NE(format_study_table(linear, {}).find("times (step batch / B)^1"), std::string::npos);
  EXPECT_NE(
      expect_input_error(replaced(text, "scale_with_step_batch: linear", "scale_with_step_batch: square"))
          .find("expected one of 'none', 'sqrt', 'linear'"),
      std::string::npos);
}

// same_step_rate_flush adds a flush at each asynchronous schedule's step batch, once per batch size, and it
// trains with that many samples per step.
TEST(StudyRunner, AStepRateBaselineIsAFlushAtTheAsynchronousScheduleStepBatch) {
  std::string text =
      replaced(kTinyStudy, "  - {name: pipedream-2bw, microbatches: 2}\n",
               "  - {name: pipedream-2bw, microbatches: 2}\n  - {name: pipedream, microbatches: 2}\n"
               "  - {name: async-1f1b, microbatches: 2}\n");
  text = replaced(text, "corrections: [none, error-feedback]",
                  "corrections: [none]\nsame_step_rate_flush: true");
  const Study study = parse_study(text, "s.yaml", false);
  const std::vector<StudyRun> runs = study_runs(study);
  // 4 schedules x 2 seeds, then one baseline (pipedream and async-1f1b share B' = 8, m' = 1; 2bw steps per
  // batch and needs none) x 2 seeds.
  ASSERT_EQ(runs.size(), 10U);
  EXPECT_EQ(runs[8].key(), "B=8 1f1b-flush m=1 step-rate-baseline adamw none seed=1");
  EXPECT_EQ(runs[9].global_batch, 8);
  const std::vector<CurvePoint> points = train_study_run(study, runs[8]);
  EXPECT_EQ(points.back().samples, 64);
  EXPECT_EQ(points.back().steps, 8);  // a step per 8 samples, as PipeDream's at b = 8
  EXPECT_FALSE(parse_study(kTinyStudy, "s.yaml", false).same_step_rate_flush);
}

// The tiny study with its flush's rate swept over two values and 2BW at the rate the flush does best with.
std::string swept_study() {
  return replaced(kTinyStudy, "  - {name: adamw, lr: 0.01}", "  - {name: adamw, lr: [0.01, 0.02]}");
}

TEST(StudyConfig, ARateListIsASweepOfTheSynchronousSchedulesByDefault) {
  const Study study = parse_study(swept_study(), "s.yaml", false);
  ASSERT_EQ(study.optimizers.size(), 2U);
  EXPECT_EQ(study.optimizers[0].label, "adamw lr=0.01");
  EXPECT_EQ(study.optimizers[1].label, "adamw lr=0.02");
  EXPECT_FLOAT_EQ(study.optimizers[1].learning_rate, 0.02F);
  for (const StudyOptimizer& o : study.optimizers) {
    EXPECT_EQ(o.family, "adamw");
    EXPECT_TRUE(o.swept);
  }
  EXPECT_TRUE(study.schedules[0].lr_sweep);   // 1F1B-flush: synchronous
  EXPECT_FALSE(study.schedules[1].lr_sweep);  // 2BW: asynchronous
  // A single rate is no sweep and keeps its label (and the keys of curves trained before sweeps existed).
  const Study single = parse_study(kTinyStudy, "s.yaml", false);
  EXPECT_EQ(single.optimizers.at(0).label, "adamw");
  EXPECT_FALSE(single.optimizers.at(0).swept);
  // An entry may say otherwise, and name its own corrections.
  const Study own =
      parse_study(replaced(swept_study(), "  - {name: pipedream-2bw, microbatches: 2}",
                           "  - {name: pipedream-2bw, microbatches: 2, lr_sweep: true, corrections: [none]}"),
                  "s.yaml", false);
  EXPECT_TRUE(own.schedules[1].lr_sweep);
  EXPECT_EQ(own.schedules[1].corrections,
            std::vector<executor::DelayCorrection>{executor::DelayCorrection::kNone});
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "lr: 0.01", "lr: [0.01]"))
                .find("s.yaml:13: key 'optimizers[0].lr'"),
            std::string::npos);
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "lr: 0.01", "lr: [0.01, 0.01]"))
                .find("a rate not listed before"),
            std::string::npos);
  EXPECT_NE(
      expect_input_error(replaced(kTinyStudy, "lr: 0.01", "lr: [0.01, 0]")).find("a learning rate above 0"),
      std::string::npos);
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "  - {name: adamw, lr: 0.01}",
                                        "  - {name: adamw, lr: 0.01}\n  - {name: adamw, lr: 0.02}"))
                .find("a label not used before ('adamw' is"),
            std::string::npos);
  EXPECT_NE(expect_input_error(replaced(kTinyStudy, "microbatches: 2}\n  - {name: pipedream-2bw",
                                        "microbatches: 2, corrections: [later]}\n  - {name: pipedream-2bw"))
                .find("schedules[0].corrections[0]"),
            std::string::npos);
}

TEST(StudyRunner, ASweepsOtherSchedulesWaitForItAndTrainAtTheRateItsRunsEndLowest) {
  const Study study = parse_study(swept_study(), "s.yaml", false);
  // Nothing trained: the flush at both rates x 2 seeds, then 2BW deferred at a placeholder rate (the
  // first), 2 corrections x 2 seeds: as many runs as there will be.
  std::vector<StudyRun> runs = study_runs(study);
  ASSERT_EQ(runs.size(), 8U);
  EXPECT_EQ(runs[0].key(), "B=16 1f1b-flush m=2 adamw lr=0.01 none seed=1");
  EXPECT_EQ(runs[3].key(), "B=16 1f1b-flush m=2 adamw lr=0.02 none seed=2");
  for (int i = 0; i < 8; ++i) EXPECT_EQ(runs[i].deferred, i >= 4) << i;
  // Three of the four swept runs in: still no choice.
  StudyCurves curves;
  curves[runs[0].key()] = curve({{6, 0}, {5, 1}, {4.0, 2}});
  curves[runs[1].key()] = curve({{6, 0}, {5, 1}, {3.0, 2}});
  curves[runs[2].key()] = curve({{6, 0}, {5, 1}, {3.6, 2}});
  EXPECT_TRUE(chosen_learning_rates(study, curves).empty());
  // lr 0.01 ends at (4 + 3) / 2 = 3.5 on average, lr 0.02 at (3.6 + 3.2) / 2 = 3.4: 0.02 is chosen even
  // though lr 0.01's seed 2 is the lowest single run.
  curves[runs[3].key()] = curve({{6, 0}, {5, 1}, {3.2, 2}});
  const auto chosen = chosen_learning_rates(study, curves);
  ASSERT_EQ(chosen.size(), 1U);
  EXPECT_EQ(chosen.at({16, "adamw"}), 1U);
  runs = study_runs(study, curves);
  ASSERT_EQ(runs.size(), 8U);
  EXPECT_EQ(runs[4].key(), "B=16 pipedream-2bw m=2 adamw lr=0.02 none seed=1");
  EXPECT_EQ(runs[7].key(), "B=16 pipedream-2bw m=2 adamw lr=0.02 error-feedback seed=2");
  for (const StudyRun& run : runs) EXPECT_FALSE(run.deferred);
  // A CSV may hold 2BW at either rate (a choice that changed when a swept run was retrained).
  EXPECT_EQ(study_runs_at_every_rate(study).size(), 12U);
  // The comparison shows the flush at the chosen rate only; the sweep table both, marked.
  for (std::size_t i = 4; i < 8; ++i) curves[runs[i].key()] = curve({{6, 0}, {5, 1}, {4.5, 2}});
  const std::vector<GroupSummary> groups = summarize_study(study, curves);
  ASSERT_EQ(groups.size(), 3U);
  EXPECT_EQ(groups[0].optimizer, "adamw lr=0.02");
  const std::vector<GroupSummary> sweep = summarize_lr_sweep(study, curves);
  ASSERT_EQ(sweep.size(), 2U);
  EXPECT_FALSE(sweep[0].best_for_schedule);
  EXPECT_FALSE(sweep[0].chosen);
  EXPECT_TRUE(sweep[1].best_for_schedule);
  EXPECT_TRUE(sweep[1].chosen);
  EXPECT_DOUBLE_EQ(sweep[1].final_val_loss, 3.4);
  const std::string table = format_lr_sweep_table(study, sweep);
  EXPECT_NE(table.find("| 16 | 1f1b-flush m=2 | adamw lr=0.02 | 0.02 | 2 | 3.4000 |"), std::string::npos)
      << table;
  EXPECT_NE(table.find("| best, chosen |"), std::string::npos) << table;
  EXPECT_EQ(format_lr_sweep_table(parse_study(kTinyStudy, "s.yaml", false), {}), "");
}

TEST(StudyRunner, ASweptStudyTrainsItsSweepThenTheRestAndResumes) {
  const Study study = parse_study(swept_study(), "s.yaml", false);
  const std::string path = testing::TempDir() + "/study_swept.csv";
  std::filesystem::remove(path);
  StudyCurves curves;
  const StudyProgress first = run_study(study, path, curves, false, 2);
  EXPECT_EQ(first.runs_total, 8);
  EXPECT_EQ(first.runs_executed, 8);
  const auto chosen = chosen_learning_rates(study, curves);
  ASSERT_EQ(chosen.size(), 1U);
  const std::string rate = study.optimizers[chosen.at({16, "adamw"})].label;
  for (const StudyRun& run : study_runs(study, curves)) {
    EXPECT_TRUE(curves.contains(run.key())) << run.key();
    if (!run.schedule.lr_sweep) {
      EXPECT_EQ(run.optimizer.label, rate);
    }
  }
  StudyCurves again;
  const StudyProgress second = run_study(study, path, again, false);
  EXPECT_EQ(second.runs_resumed, 8);
  EXPECT_EQ(second.runs_executed, 0);
}

TEST(StudyConfig, AnEntryMayNameItsOwnDepthAndOptimizers) {
  std::string text =
      replaced(kTinyStudy, "  - {name: adamw, lr: 0.01}",
               "  - {name: adamw, lr: 0.01}\n  - {name: adamw, label: adamw-b1-0.5, lr: 0.01, beta1: 0.5}");
  text = replaced(text, "  - {name: pipedream-2bw, microbatches: 2}",
                  "  - {name: pipedream-2bw, microbatches: 2, optimizers: [adamw-b1-0.5]}\n"
                  "  - {name: pipedream, microbatches: 4, stages: 4, corrections: [none]}");
  text = replaced(text, "corrections: [none, error-feedback]",
                  "corrections: [none, error-feedback]\nsame_step_rate_flush: true");
  const Study study = parse_study(text, "s.yaml", false);
  EXPECT_EQ(stages_of(study, study.schedules[0]), 2);
  EXPECT_EQ(stages_of(study, study.schedules[2]), 4);
  const std::vector<StudyRun> runs = study_runs(study);
  std::vector<std::string> groups;
  for (const StudyRun& run : runs) {
    if (run.seed == 1) groups.push_back(run.group());
  }
  // The flush with both optimizers; 2BW with the one it names (both corrections); PipeDream at N = 4 with
  // both; its step-rate baseline at N = 4 too.
  EXPECT_EQ(groups, (std::vector<std::string>{
                        "B=16 1f1b-flush m=2 adamw none",
                        "B=16 1f1b-flush m=2 adamw-b1-0.5 none",
                        "B=16 pipedream-2bw m=2 adamw-b1-0.5 none",
                        "B=16 pipedream-2bw m=2 adamw-b1-0.5 error-feedback",
                        "B=16 pipedream m=4 N=4 adamw none",
                        "B=16 pipedream m=4 N=4 adamw-b1-0.5 none",
                        "B=4 1f1b-flush m=1 N=4 step-rate-baseline adamw none",
                        "B=4 1f1b-flush m=1 N=4 step-rate-baseline adamw-b1-0.5 none",
                    }));
  EXPECT_EQ(microbatches_per_step(study, study.schedules[2]), 1);
  // Its own depth changes its hash; the others' hashes do not move.
  StudyRun deeper = runs.at(8);
  const std::string hash = deeper.hash(study);
  deeper.schedule.stages = 8;
  EXPECT_NE(deeper.hash(study), hash);
  // A PipeDream run at N = 4 trains: four stages' worth of units, a point per step of B = 4 samples.
  const std::vector<CurvePoint> points = train_study_run(study, runs.at(8));
  EXPECT_EQ(points.back().samples, 64);
  EXPECT_NE(expect_input_error(replaced(text, "optimizers: [adamw-b1-0.5]", "optimizers: [adamw-b1]"))
                .find("schedules[1].optimizers[0]"),
            std::string::npos);
  EXPECT_NE(expect_input_error(replaced(text, "stages: 4,", "stages: 0,")).find("schedules[2].stages"),
            std::string::npos);
  // A key given twice is refused (yaml-cpp keeps both; the optimizer check once read past the first list).
  EXPECT_NE(expect_input_error(replaced(text, "optimizers: [adamw-b1-0.5]",
                                        "optimizers: [adamw, adamw-b1-0.5], optimizers: [adamw]"))
                .find("schedules[1].optimizers': duplicate key"),
            std::string::npos);
}

TEST(StudyConfig, DelayMasksAreReadPerStageOfTheLayoutAndOnlyForSynchronousSchedules) {
  const auto with_mask = [](const std::string& schedule) {
    return replaced(kTinyStudy, "{name: 1f1b-flush, microbatches: 2}", schedule);
  };
  const Study listed =
      parse_study(with_mask("{name: 1f1b-flush, microbatches: 2, delay_mask: [0, 1]}"), "s.yaml", false);
  EXPECT_EQ(listed.schedules[0].one_step_delayed, (std::vector<bool>{false, true}));
  EXPECT_EQ(listed.schedules[0].label(), "1f1b-flush m=2 delay=0,1");
  const Study all =
      parse_study(with_mask("{name: interleaved-1f1b, microbatches: 2, delay_mask: all}"), "s.yaml", false);
  EXPECT_EQ(all.schedules[0].one_step_delayed, std::vector<bool>(4, true));  // 2 devices x 2 chunks
  EXPECT_NE(expect_input_error(with_mask("{name: 1f1b-flush, microbatches: 2, delay_mask: [1]}"))
                .find("a list of 2 values 0 or 1"),
            std::string::npos);
  EXPECT_NE(expect_input_error(with_mask("{name: 1f1b-flush, microbatches: 2, delay_mask: first-hlf}"))
                .find("did you mean 'first-half'"),
            std::string::npos);
  EXPECT_NE(expect_input_error(with_mask("{name: pipedream, microbatches: 2, delay_mask: all}"))
                .find("pipedream is asynchronous"),
            std::string::npos);
}

// The curves in docs/results are the shipped studies' own: every run resumes from them (a change to a study,
// to what a run's hash covers or to the CSV's format must come with the studies run again).
TEST(StudyResults, TheShippedCurvesResumeEveryRunOfTheirStudy) {
  for (const char* name : {"paci-scaled", "one-step-delay", "paci-long", "one-step-delay-long"}) {
    const Study study =
        load_study(std::string(PIPESIM_SOURCE_DIR) + "/share/studies/" + name + ".yaml", false);
    std::vector<std::string> distrusted;
    const StudyCurves curves = read_complete_curves(
        read_text(std::string(PIPESIM_SOURCE_DIR) + "/docs/results/" + name + ".csv"), study, &distrusted);
    for (const StudyRun& run : study_runs(study, curves)) {
      EXPECT_FALSE(run.deferred) << name << ": " << run.key();
      EXPECT_TRUE(curves.contains(run.key())) << name << ": " << run.key();
    }
    EXPECT_TRUE(distrusted.empty()) << name << ": " << (distrusted.empty() ? "" : distrusted.front());
  }
}

TEST(StudyRunner, AnOutDirectoryThatCannotBeMadeNamesItsPathAndWhy) {
  test::TempDir dir;
  const test::CommandResult r = test::run_pipesim(
      fmt::format("train {}/share/studies/one-step-delay.yaml --quick --out /proc/nope", PIPESIM_SOURCE_DIR),
      dir);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--out /proc/nope: cannot create the output directory"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace pipesim
