#pragma once
// A small pipeline (4 devices, 8 microbatches, 3 batches) and the teacher model the executor tests train.
#include <fmt/format.h>

#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "executor/datasets.h"
#include "executor/execution_result.h"
#include "executor/training_setup.h"
#include "schedules/registry.h"
#include "tests/test_util.h"

namespace pipesim::executor::test {

inline constexpr int kDevices = 4;
inline constexpr int kMicrobatches = 8;  // a multiple of N (interleaved) and >= 2N-1 (zb-h2)
inline constexpr int kBatches = 3;

inline Scenario small_scenario() {
  return pipesim::test::scenario_from_yaml(fmt::format(
      "pipeline: {{stages: {}, microbatches: {}, batches: {}}}\n"
      "costs: {{forward_ms: [1.0, 1.2, 0.9, 1.1], backward_input_ms: 1.0, backward_weight_ms: 0.7,\n"
      "        activation_bytes: 1e6, weight_grad_activation_bytes: 4e5}}\n",
      kDevices, kMicrobatches, kBatches));
}

inline TrainingSetup small_setup() {
  TrainingSetup setup;
  setup.shape = {.input_width = 12, .width = 16, .blocks = 6, .classes = 4};  // 8 units: 2 chunks x 4
  setup.samples_per_microbatch = 4;
  setup.microbatches_per_batch = kMicrobatches;
  setup.learning_rate = 0.1F;
  setup.seed = 42;
  return setup;
}

// The character models on the repository's snippet, small enough for every schedule's test: a residual MLP
// with a character-window input (2 + 5 + 1 units) and a tiny GPT (1 + 2 x 4 + 1 units); both give every one
// of interleaved-1f1b's 8 stages a unit.
inline TrainingSetup char_mlp_setup() {
  TrainingSetup setup = small_setup();
  setup.data = load_dataset("snippet", 6, TextTarget::kNextCharacter);
  setup.shape = {.input_width = 6,
                 .width = 16,
                 .blocks = 5,
                 .classes = setup.data->classes(),
                 .token_input = true,
                 .embedding_width = 4};
  return setup;
}

inline TrainingSetup gpt_setup() {
  TrainingSetup setup = small_setup();
  setup.samples_per_microbatch = 2;
  setup.data = load_dataset("snippet", 8, TextTarget::kEveryPosition);
  setup.shape = {.input_width = 8,
                 .width = 8,
                 .blocks = 4,
                 .classes = setup.data->classes(),
                 .kind = ModelKind::kGpt,
                 .token_input = true,
                 .heads = 2};
  return setup;
}

// "teacher_mlp", "char_mlp" or "gpt".
inline TrainingSetup setup_of_model(const std::string& model) {
  if (model == "char_mlp") return char_mlp_setup();
  if (model == "gpt") return gpt_setup();
  return small_setup();
}

// A schedule's plan for the small pipeline, with the cost and comm models the engine would use.
struct PlannedRun {
  std::unique_ptr<Schedule> schedule;
  std::unique_ptr<CostModel> costs;
  std::unique_ptr<CommModel> comm;
  ExecutionPlan plan;
  int stages = 0;
  int model_stages = 0;  // pieces of the model: fewer than stages when the layout runs copies of it
};

inline PlannedRun plan_small(const std::string& name, std::optional<OptimizerSync> sync = std::nullopt,
                             const std::map<std::string, std::string>& params = {}) {
  const Scenario scenario = small_scenario();
  PlannedRun run;
  ScheduleParams schedule_params(pipesim::test::kTestSource);
  for (const auto& [key, value] : params) schedule_params.set(key, value);
  run.schedule = make_schedule(name, schedule_params);
  PipelineSpec spec;
  spec.devices = kDevices;
  spec.microbatches = kMicrobatches;
  spec.batches = kBatches;
  spec.sync = run.schedule->default_sync() == OptimizerSync::kNone
                  ? OptimizerSync::kNone
                  : sync.value_or(run.schedule->default_sync());
  const PipelineLayout layout = run.schedule->layout(kDevices);
  run.costs = make_cost_model(scenario, layout, {});
  run.comm = make_comm_model(scenario, layout);
  run.plan = run.schedule->plan(spec, *run.costs);
  run.stages = layout.stages;
  run.model_stages = layout.stages_per_pipeline();
  return run;
}

inline bool bit_identical(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

inline const ExecutedOp& find_executed(const ExecutionResult& r, OpKind kind, int stage, int mb) {
  for (const ExecutedOp& op : r.ops) {
    if (op.action.kind == kind && op.action.stage == stage && op.action.microbatch == mb) return op;
  }
  throw std::runtime_error("op not executed: " + describe({kind, false, stage, mb}));
}

// Δ per (stage, microbatch): the version its B (or I) read minus the version its F read.
template <typename Op>
std::map<std::pair<int, int>, int> drift_per_microbatch(const std::vector<Op>& ops) {
  std::map<std::pair<int, int>, int> drift;
  for (const Op& op : ops) {
    const auto key = std::pair{op.action.stage, op.action.microbatch};
    if (op.action.kind == OpKind::F) drift[key] -= op.weight_version;
    if (op.action.kind == OpKind::B || op.action.kind == OpKind::I) drift[key] += op.weight_version;
  }
  return drift;
}

inline std::string test_name_of(std::string schedule) {
  for (char& c : schedule) {
    if (c == '-') c = '_';
  }
  return schedule;
}

inline const std::vector<std::string>& synchronous_schedules() {
  static const std::vector<std::string> names{"gpipe", "1f1b-flush", "interleaved-1f1b", "zb-h1", "zb-h2",
                                              "zb-1p", "zb-2p"};
  return names;
}

}  // namespace pipesim::executor::test
