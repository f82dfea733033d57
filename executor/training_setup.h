#pragma once
// What the executor trains and how: the model, the microbatches and the update rule (optimizer, learning-rate
// schedule, delay correction; plain SGD by default).
#include <cstdint>
#include <span>
#include <vector>

#include "executor/model.h"
#include "executor/optim/stage_updater.h"

namespace pipesim::executor {
class Dataset;
}

namespace pipesim::executor {

struct TrainingSetup {
  ModelShape shape;
  int samples_per_microbatch = 4;
  int microbatches_per_batch = 1;  // m: global microbatch j is index j % m of step j / m
  float learning_rate = 0.05F;     // peak
  std::uint64_t seed = 1;
  // What microbatches hold (datasets.h); null: the synthetic teacher task of shape.input_width features and
  // shape.classes classes.
  std::shared_ptr<const Dataset> data;
  OptimizerConfig optimizer;
  LrSchedule lr_schedule;
  DelayCorrection correction = DelayCorrection::kNone;
  UpdateRule update_rule() const { return {learning_rate, optimizer, lr_schedule, correction}; }
};

// A 64-bit hash of a weight copy's bits (FNV-1a over 64-bit words, then a final mix): tells two copies apart
// without keeping them.
std::uint64_t fingerprint(std::span<const float> values);

// The float model's stages for a pipeline of `stages` (virtual) stages, and their initial weights.
struct StagedModel {
  std::vector<std::unique_ptr<LayerUnit<float>>> units;
  std::vector<StageModel<float>> stages;
  std::vector<std::vector<float>> initial_parameters;  // per stage
};
StagedModel build_staged_model(const TrainingSetup& setup, int stages);
// Stage s's U op under the setup's update rule.
StageUpdater make_stage_updater(const TrainingSetup& setup, const StagedModel& model, int stage);

}  // namespace pipesim::executor
