#pragma once
// What the executor trains and how: the model, the microbatches and the optimizer (plain SGD).
#include <cstdint>
#include <span>
#include <vector>

#include "executor/model.h"

namespace pipesim::executor {
class Dataset;
}

namespace pipesim::executor {

struct TrainingSetup {
  ModelShape shape;
  int samples_per_microbatch = 4;
  int microbatches_per_batch = 1;  // m: global microbatch j is index j % m of step j / m
  float learning_rate = 0.05F;
  std::uint64_t seed = 1;
  // What microbatches hold (datasets.h); null: the synthetic teacher task of shape.input_width features and
  // shape.classes classes.
  std::shared_ptr<const Dataset> data;
};

// params -= lr * mean of the gradients, summed in the order given (microbatch order), so that a pipeline and
// plain gradient accumulation leave bit-identical weights.
void sgd_step(std::span<float> params, const std::vector<const std::vector<float>*>& gradients_in_order,
              float learning_rate);

// FNV-1a over the bytes of a weight copy: tells two copies apart without keeping them.
std::uint64_t fingerprint(std::span<const float> values);

// The float model's stages for a pipeline of `stages` (virtual) stages, and their initial weights.
struct StagedModel {
  std::vector<std::unique_ptr<LayerUnit<float>>> units;
  std::vector<StageModel<float>> stages;
  std::vector<std::vector<float>> initial_parameters;  // per stage
};
StagedModel build_staged_model(const TrainingSetup& setup, int stages);

}  // namespace pipesim::executor
