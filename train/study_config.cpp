#include "train/study_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "base/errors.h"
#include "base/text_file.h"
#include "io/data_dirs.h"
#include "io/yaml_reader.h"
#include "schedules/registry.h"

namespace pipesim {

const std::vector<std::string>& study_tasks() {
  // teacher-mlp: the residual MLP on the synthetic teacher task (executor/teacher_data.h); austen-gpt: the
  // tiny character GPT on Jane Austen's novels (Debian's r-cran-janeaustenr, one novel held out);
  // snippet-gpt: the same GPT on the repository's public-domain snippet (no package needed). The study's
  // `model:` width and blocks apply to each.
  static const std::vector<std::string> tasks{"teacher-mlp", "austen-gpt", "snippet-gpt"};
  return tasks;
}

std::string StudySchedule::request() const {
  std::string out = name;
  for (const auto& [key, value] : params) out += fmt::format(":{}={}", key, value);
  return out;
}

int stages_of(const Study& study, const StudySchedule& schedule) {
  return schedule.stages > 0 ? schedule.stages : study.stages;
}

bool trains_with(const StudySchedule& schedule, const StudyOptimizer& optimizer) {
  return schedule.optimizers.empty() || std::find(schedule.optimizers.begin(), schedule.optimizers.end(),
                                                  optimizer.family) != schedule.optimizers.end();
}

std::string StudySchedule::label() const {
  std::string out = fmt::format("{} m={}", request(), microbatches);
  if (stages > 0) out += fmt::format(" N={}", stages);
  if (!delay_mask.empty()) out += " delay=" + delay_mask;
  if (baseline) out += " step-rate-baseline";
  return out;
}

namespace {

std::vector<int> int_list(const YamlReader& reader, const YAML::Node& node, const std::string& key,
                          int min_value) {
  if (!node.IsSequence() || node.size() == 0) reader.fail(node, key, "a non-empty list of integers");
  std::vector<int> out;
  for (std::size_t i = 0; i < node.size(); ++i)
    out.push_back(reader.get_int(node[i], fmt::format("{}[{}]", key, i), min_value));
  return out;
}

// A schedule entry's delay_mask: first-half, all, or a list of 0/1 per stage of the schedule's layout.
void read_delay_mask(const YamlReader& reader, const YAML::Node& node, const std::string& key, int devices,
                     StudySchedule& out) {
  ScheduleParams params(reader.source());
  for (const auto& [k, v] : out.params) params.set(k, v);
  const std::unique_ptr<Schedule> schedule = make_schedule(out.name, params);
  if (schedule->default_sync() == OptimizerSync::kNone) {
    reader.fail(node, key,
                "a delay mask on a synchronous schedule (one step per batch); " + out.name +
                    " is asynchronous and has its own delays");
  }
  const int stages = schedule->layout(devices).stages;
  if (node.IsScalar()) {
    const std::string text = reader.get_choice(node, key, {"first-half", "all"});
    out.one_step_delayed.assign(stages, false);
    for (int s = 0; s < (text == "all" ? stages : stages / 2); ++s) out.one_step_delayed[s] = true;
    out.delay_mask = text;
    return;
  }
  const std::string expected = fmt::format(
      "first-half, all, or a list of {} values 0 or 1 (one per stage of "
      "{}'s layout)",
      stages, out.name);
  if (!node.IsSequence() || static_cast<int>(node.size()) != stages) reader.fail(node, key, expected);
  for (std::size_t i = 0; i < node.size(); ++i) {
    const int bit = reader.get_int(node[i], fmt::format("{}[{}]", key, i), 0);
    if (bit > 1) reader.fail(node[i], fmt::format("{}[{}]", key, i), "0 or 1");
    out.one_step_delayed.push_back(bit == 1);
    if (i > 0) out.delay_mask += ',';
    out.delay_mask += bit == 1 ? '1' : '0';
  }
}

std::vector<executor::DelayCorrection> read_corrections(const YamlReader& reader, const YAML::Node& node,
                                                        const std::string& key) {
  if (!node.IsSequence() || node.size() == 0)
    reader.fail(node, key, "a non-empty list of delay corrections (none, error-feedback, weight-prediction)");
  std::vector<executor::DelayCorrection> out;
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string item_key = fmt::format("{}[{}]", key, i);
    out.push_back(executor::parse_delay_correction(
        reader.get_choice(node[i], item_key, executor::delay_correction_names())));
  }
  return out;
}

StudySchedule read_schedule(const YamlReader& reader, const YAML::Node& node, const std::string& key,
                            int devices) {
  if (!node.IsMap()) reader.fail(node, key, "a map {name: ..., microbatches: m, <schedule parameter>: ...}");
  reader.expect_unique_keys(node, key);
  StudySchedule out;
  for (const auto& item : node) {
    if (!item.first.IsScalar()) reader.fail(item.first, key, "keys that are names (name, microbatches, ...)");
    const std::string k = item.first.as<std::string>();
    const std::string item_key = key + "." + k;
    if (k == "name") {
      out.name = reader.get_string(item.second, item_key);
    } else if (k == "microbatches") {
      out.microbatches = reader.get_int(item.second, item_key, 1);
    } else if (k == "stages") {
      out.stages = reader.get_int(item.second, item_key, 1);
      devices = out.stages;
    } else if (k == "optimizers") {
      if (!item.second.IsSequence() || item.second.size() == 0)
        reader.fail(item.second, item_key, "a non-empty list of the study's optimizer labels");
      for (std::size_t i = 0; i < item.second.size(); ++i)
        out.optimizers.push_back(reader.get_string(item.second[i], fmt::format("{}[{}]", item_key, i)));
    } else if (k == "delay_mask" || k == "lr_sweep" || k == "corrections") {
      continue;  // read below, once the schedule and its parameters are known
    } else {
      if (!item.second.IsScalar()) reader.fail(item.second, item_key, "a scalar schedule parameter");
      out.params[k] = item.second.as<std::string>();
    }
  }
  if (out.name.empty()) reader.fail(node, key + ".name", "a schedule name");
  // Checked here, where the file and line are known, rather than when the run starts.
  std::vector<std::string> names;
  for (const ScheduleInfo& info : registered_schedules()) names.push_back(info.name);
  if (out.name.rfind("csv:", 0) != 0 &&
      std::find(names.begin(), names.end(), canonical_schedule_name(out.name)) == names.end()) {
    reader.get_choice(node["name"], key + ".name", names,
                      "a registered schedule (`pipesim schedules` lists them) or csv:PATH");
  }
  if (node["delay_mask"]) read_delay_mask(reader, node["delay_mask"], key + ".delay_mask", devices, out);
  if (out.name.rfind("csv:", 0) == 0) {
    out.lr_sweep = true;
  } else {
    ScheduleParams params(reader.source());
    for (const auto& [k, v] : out.params) params.set(k, v);
    out.lr_sweep = make_schedule(out.name, params)->default_sync() != OptimizerSync::kNone;
  }
  if (node["lr_sweep"]) out.lr_sweep = reader.get_bool(node["lr_sweep"], key + ".lr_sweep");
  if (node["corrections"])
    out.corrections = read_corrections(reader, node["corrections"], key + ".corrections");
  return out;
}

// One entry of `optimizers`: one optimizer, or one per rate when `lr` is a list (a sweep).
std::vector<StudyOptimizer> read_optimizer(const YamlReader& reader, const YAML::Node& node,
                                           const std::string& key) {
  reader.expect_map(node, key,
                    {"name", "label", "lr", "momentum", "beta1", "beta2", "beta3", "epsilon", "weight_decay",
                     "adamw_lr", "shampoo_beta", "precondition_frequency"});
  StudyOptimizer out;
  for (const char* required : {"name", "lr"}) {
    if (!node[required]) {
      reader.fail(node, key + "." + required,
                  std::string(required) == "lr" ? "a learning rate (lr: 0.01) or a list of them (a sweep)"
                                                : "the optimizer's name (sgd, adamw, muon)");
    }
  }
  const std::string name = reader.get_choice(node["name"], key + ".name", executor::optimizer_kind_names());
  // Each optimizer's published defaults where they differ from AdamW's (beta1 0.9, beta2 0.95).
  out.config = executor::optimizer_with_defaults(executor::parse_optimizer_kind(name));
  out.family = node["label"] ? reader.get_string(node["label"], key + ".label") : name;
  out.label = out.family;
  auto optional_float = [&](const char* k, float& into, double min_value) {
    if (node[k]) into = static_cast<float>(reader.get_double(node[k], key + "." + k, min_value));
  };
  optional_float("momentum", out.config.momentum, 0.0);
  optional_float("beta1", out.config.beta1, 0.0);
  optional_float("beta2", out.config.beta2, 0.0);
  optional_float("beta3", out.config.beta3, 0.0);
  optional_float("epsilon", out.config.epsilon, 0.0);
  optional_float("weight_decay", out.config.weight_decay, 0.0);
  for (const char* soap_key : {"shampoo_beta", "precondition_frequency"}) {
    if (node[soap_key] && out.config.kind != executor::OptimizerKind::kSoap)
      reader.fail(node[soap_key], key + "." + soap_key, "soap only");
  }
  optional_float("shampoo_beta", out.config.shampoo_beta, 0.0);
  if (node["precondition_frequency"]) {
    out.config.precondition_frequency =
        reader.get_int(node["precondition_frequency"], key + ".precondition_frequency", 1);
  }
  double adamw_lr = 0;  // Muon's rate for its AdamW part: absolute, the same at every swept rate
  if (node["adamw_lr"]) {
    if (out.config.kind != executor::OptimizerKind::kMuon)
      reader.fail(node["adamw_lr"], key + ".adamw_lr", "muon only");
    adamw_lr = reader.get_double(node["adamw_lr"], key + ".adamw_lr", 0.0);
  }
  const YAML::Node lr = node["lr"];
  const bool sweep = lr.IsSequence();
  if (sweep && lr.size() < 2)
    reader.fail(lr, key + ".lr", "a learning rate, or a list of at least two (a sweep)");
  std::vector<StudyOptimizer> rates;
  for (std::size_t i = 0; i < (sweep ? lr.size() : 1); ++i) {
    const YAML::Node item = sweep ? lr[i] : lr;
    const std::string item_key = sweep ? fmt::format("{}.lr[{}]", key, i) : key + ".lr";
    StudyOptimizer rate = out;
    rate.learning_rate = static_cast<float>(reader.get_double(item, item_key, 0.0));
    if (!(rate.learning_rate > 0)) reader.fail(item, item_key, "a learning rate above 0");
    for (const StudyOptimizer& earlier : rates) {
      if (earlier.learning_rate == rate.learning_rate)
        reader.fail(item, item_key, "a rate not listed before");
    }
    if (sweep) {
      rate.swept = true;
      rate.label = fmt::format("{} lr={}", out.family, item.as<std::string>());
    }
    if (adamw_lr > 0) rate.config.adamw_lr_ratio = static_cast<float>(adamw_lr / rate.learning_rate);
    rates.push_back(rate);
  }
  return rates;
}

// The keys a `quick:` section may replace.
const std::vector<std::string> kQuickKeys{
    "sample_budget", "eval_every_samples", "eval_every_steps", "validation_samples", "seeds",
    "targets",       "global_batches",     "schedules",        "optimizers",         "corrections"};

}  // namespace

std::string StudyTarget::label() const {
  return metric == Metric::kLoss ? fmt::format("val loss <= {}", value)
                                 : fmt::format("val accuracy >= {}", value);
}

namespace {

// The root with the `quick:` section's keys replacing the study's own (--quick).
YAML::Node study_parse_root(const YamlReader& reader, const std::string& yaml_text, const std::string& source,
                            bool quick) {
  YAML::Node root = YamlReader::load(yaml_text, source);
  reader.expect_map(
      root, "",
      {"name", "task", "model", "target_setting", "stages", "sample_budget", "eval_every_samples",
       "eval_every_steps", "validation_samples", "seeds", "global_batches", "learning_rate",
       "same_step_rate_flush", "schedules", "optimizers", "corrections", "targets", "quick"});
  if (quick && root["quick"]) {
    reader.expect_map(root["quick"], "quick", kQuickKeys);
    for (const auto& item : root["quick"]) root[item.first.as<std::string>()] = item.second;
  }
  return root;
}

void study_parse_name(const YamlReader& reader, YAML::Node& root, Study& study) {
  study.name = reader.get_string(root["name"], "name");
  // The name becomes OUT/NAME.csv and OUT/NAME-table.md: a file name, never a path out of --out.
  if (study.name.empty() || study.name == "." || study.name == ".." ||
      study.name.find_first_of("/\\") != std::string::npos || study.name.find('\0') != std::string::npos) {
    reader.fail(root["name"], "name",
                "a file name without '/' (the study writes OUT/NAME.csv and OUT/NAME-table.md under --out)");
  }
}

// `task:` and `model:`: what is trained.
void study_parse_task_and_model(const YamlReader& reader, YAML::Node& root, Study& study) {
  if (root["task"]) {
    study.task = reader.get_choice(root["task"], "task", study_tasks());
  }
  if (root["model"]) {
    const YAML::Node model = root["model"];
    reader.expect_map(model, "model", {"input_width", "width", "blocks", "classes"});
    if (model["input_width"])
      study.shape.input_width = reader.get_int(model["input_width"], "model.input_width", 1);
    if (model["width"]) study.shape.width = reader.get_int(model["width"], "model.width", 1);
    if (model["blocks"]) study.shape.blocks = reader.get_int(model["blocks"], "model.blocks", 0);
    if (model["classes"]) study.shape.classes = reader.get_int(model["classes"], "model.classes", 2);
  }
}

void study_parse_target_setting(const YamlReader& reader, YAML::Node& root, Study& study) {
  const YAML::Node target = root["target_setting"];
  reader.expect_map(target, "target_setting", {"scenario", "set"});
  if (!target["scenario"])
    reader.fail(target, "target_setting.scenario", "a scenario key (the target setting's scenario file)");
  study.target_scenario = reader.get_string(target["scenario"], "target_setting.scenario");
  study.target_scenario_where = reader.where(target["scenario"], "target_setting.scenario");
  if (target["set"]) {
    if (!target["set"].IsSequence()) reader.fail(target["set"], "target_setting.set", "a list of key=value");
    for (std::size_t i = 0; i < target["set"].size(); ++i)
      study.target_overrides.push_back(
          reader.get_string(target["set"][i], fmt::format("target_setting.set[{}]", i)));
  }
}

// The stages, the samples each run trains on, its evaluation grid, its seeds and its global batches.
void study_parse_budget(const YamlReader& reader, YAML::Node& root, Study& study) {
  study.stages = reader.get_int(root["stages"], "stages", 1);
  study.sample_budget = reader.get_int(root["sample_budget"], "sample_budget", 1);
  if (root["eval_every_samples"].IsDefined() == root["eval_every_steps"].IsDefined()) {
    reader.fail(
        root, "eval_every_samples",
        "exactly one of eval_every_samples (a grid in samples) and eval_every_steps (in the schedule's "
        "optimizer steps)");
  }
  if (root["eval_every_samples"])
    study.eval_every_samples = reader.get_int(root["eval_every_samples"], "eval_every_samples", 1);
  else
    study.eval_every_steps = reader.get_int(root["eval_every_steps"], "eval_every_steps", 1);
  if (root["validation_samples"])
    study.validation_samples = reader.get_int(root["validation_samples"], "validation_samples", 1);
  for (int seed : int_list(reader, root["seeds"], "seeds", 0))
    study.seeds.push_back(static_cast<std::uint64_t>(seed));
  study.global_batches = int_list(reader, root["global_batches"], "global_batches", 1);
}

void study_parse_learning_rate(const YamlReader& reader, YAML::Node& root, Study& study) {
  if (!root["learning_rate"]) return;
  reader.expect_map(root["learning_rate"], "learning_rate",
                    {"warmup_fraction", "floor_ratio", "scale_with_step_batch"});
  const YAML::Node lr = root["learning_rate"];
  if (lr["scale_with_step_batch"]) {
    const std::string scaling = reader.get_choice(
        lr["scale_with_step_batch"], "learning_rate.scale_with_step_batch", {"none", "sqrt", "linear"});
    study.lr_scaling = scaling == "sqrt"     ? Study::LrScaling::kSqrt
                       : scaling == "linear" ? Study::LrScaling::kLinear
                                             : Study::LrScaling::kNone;
  }
  if (lr["warmup_fraction"])
    study.warmup_fraction = reader.get_double(lr["warmup_fraction"], "learning_rate.warmup_fraction", 0.0);
  if (lr["floor_ratio"])
    study.floor_ratio = reader.get_double(lr["floor_ratio"], "learning_rate.floor_ratio", 0.0);
  if (study.warmup_fraction >= 1.0)
    reader.fail(lr["warmup_fraction"], "learning_rate.warmup_fraction", "a fraction below 1");
  if (study.floor_ratio > 1.0)
    reader.fail(lr["floor_ratio"], "learning_rate.floor_ratio", "a ratio in [0, 1]");
}

void study_parse_schedules(const YamlReader& reader, const YAML::Node& schedules, Study& study) {
  if (!schedules.IsSequence() || schedules.size() == 0)
    reader.fail(schedules, "schedules", "a non-empty list");
  for (std::size_t i = 0; i < schedules.size(); ++i)
    study.schedules.push_back(
        read_schedule(reader, schedules[i], fmt::format("schedules[{}]", i), study.stages));
}

void study_parse_optimizers(const YamlReader& reader, YAML::Node& root, Study& study) {
  const YAML::Node optimizers = root["optimizers"];
  if (!optimizers.IsSequence() || optimizers.size() == 0)
    reader.fail(optimizers, "optimizers", "a non-empty list");
  for (std::size_t i = 0; i < optimizers.size(); ++i) {
    for (StudyOptimizer& o : read_optimizer(reader, optimizers[i], fmt::format("optimizers[{}]", i))) {
      for (const StudyOptimizer& earlier : study.optimizers) {
        if (earlier.label == o.label)
          reader.fail(optimizers[i], fmt::format("optimizers[{}]", i),
                      fmt::format("a label not used before ('{}' is; give this entry a `label:`)", o.label));
      }
      study.optimizers.push_back(std::move(o));
    }
  }
}

// A schedule's own optimizer list names the study's optimizers (their labels, without a swept " lr=").
void study_check_schedule_optimizers(const YamlReader& reader, const YAML::Node& schedules,
                                     const Study& study) {
  std::vector<std::string> families;
  for (const StudyOptimizer& o : study.optimizers) {
    if (std::find(families.begin(), families.end(), o.family) == families.end()) families.push_back(o.family);
  }
  for (std::size_t i = 0; i < study.schedules.size(); ++i) {
    for (std::size_t j = 0; j < study.schedules[i].optimizers.size(); ++j) {
      reader.get_choice(schedules[i]["optimizers"][j], fmt::format("schedules[{}].optimizers[{}]", i, j),
                        families, "the label of one of the study's optimizers");
    }
  }
}

void study_parse_targets(const YamlReader& reader, YAML::Node& root, Study& study) {
  const YAML::Node targets = root["targets"];
  reader.expect_map(targets, "targets", {"loss", "accuracy"});
  for (const auto& [key, metric] : {std::pair{"loss", StudyTarget::Metric::kLoss},
                                    std::pair{"accuracy", StudyTarget::Metric::kAccuracy}}) {
    const YAML::Node values = targets[key];
    if (!values) continue;
    const std::string where = fmt::format("targets.{}", key);
    if (values.IsSequence()) {
      if (values.size() == 0) reader.fail(values, where, "a number or a non-empty list of numbers");
      for (std::size_t i = 0; i < values.size(); ++i)
        study.targets.push_back({metric, reader.get_double(values[i], fmt::format("{}[{}]", where, i), 0.0)});
    } else {
      study.targets.push_back({metric, reader.get_double(values, where, 0.0)});
    }
  }
  if (study.targets.empty())
    reader.fail(targets, "targets", "loss and/or accuracy (a number or a list each)");
}

// Each global batch splits into every schedule's microbatches.
void study_check_global_batches(const YamlReader& reader, YAML::Node& root, const Study& study) {
  for (std::size_t i = 0; i < study.global_batches.size(); ++i) {
    for (const StudySchedule& s : study.schedules) {
      if (study.global_batches[i] % s.microbatches != 0)
        reader.fail(root["global_batches"][i], fmt::format("global_batches[{}]", i),
                    fmt::format("a multiple of every schedule's microbatches ({} has m = {})", s.request(),
                                s.microbatches));
    }
  }
}

}  // namespace

Study parse_study(const std::string& yaml_text, const std::string& source, bool quick) {
  const YamlReader reader(source);
  YAML::Node root = study_parse_root(reader, yaml_text, source, quick);
  Study study;
  study.source = source;
  study_parse_name(reader, root, study);
  study_parse_task_and_model(reader, root, study);
  study_parse_target_setting(reader, root, study);
  study_parse_budget(reader, root, study);
  study_parse_learning_rate(reader, root, study);
  const YAML::Node schedules = root["schedules"];
  study_parse_schedules(reader, schedules, study);
  study_parse_optimizers(reader, root, study);
  study_check_schedule_optimizers(reader, schedules, study);
  if (root["same_step_rate_flush"])
    study.same_step_rate_flush = reader.get_bool(root["same_step_rate_flush"], "same_step_rate_flush");
  if (root["corrections"]) study.corrections = read_corrections(reader, root["corrections"], "corrections");
  if (study.corrections.empty()) study.corrections.push_back(executor::DelayCorrection::kNone);
  study_parse_targets(reader, root, study);
  study_check_global_batches(reader, root, study);
  return study;
}

Study load_study(const std::string& path_as_given, bool quick) {
  // A shipped study by its name under share/ from anywhere (io/data_dirs.h); then through the project's text
  // reader, as every input: size limit, UTF-8, BOM and CR line ends normalised.
  const std::string path = input_or_data_path(path_as_given);
  return parse_study(read_text_file(path, "study file"), path, quick);
}

}  // namespace pipesim
