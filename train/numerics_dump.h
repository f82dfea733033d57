#pragma once
// Numerics anyone can check (`pipesim execute --dump-init DIR --dump-batches DIR --dump-weights-at STEP`):
// the model's initial weights, the microbatches a run trains on and the weights after chosen optimizer steps,
// as little-endian .npy files with a manifest (manifest.json: the model, its units in order with their
// tensors, names, shapes and roles, the conventions the numerics follow, the update rule and the learning
// rate of every step), so that an independent implementation can start from the same weights and data and
// compare.
#include <span>
#include <string>
#include <vector>

#include "executor/training_setup.h"

namespace pipesim {

struct NumericsDumpOptions {
  std::string init_dir;               // manifest.json and init/; weights-step-K/ go here too
  std::string batches_dir;            // batches.json and every microbatch's inputs and labels
  std::vector<int> weights_at_steps;  // after each stage's K-th optimizer step (needs init_dir)
  bool any() const { return !init_dir.empty() || !batches_dir.empty(); }
};

// A float32 (or int32) array as a .npy file (format 1.0, little-endian, C order), written beside its path and
// renamed over it.
void write_npy(const std::string& path, std::span<const float> values, const std::vector<int>& shape);
void write_npy(const std::string& path, std::span<const int> values, const std::vector<int>& shape);

// The manifest and the initial weights, one file per tensor: init/unitNN.NAME.npy.
void write_numerics_init(const std::string& dir, const executor::TrainingSetup& setup,
                         const executor::StagedModel& model, const std::string& schedule_label, int batches,
                         const std::vector<int>& weights_at_steps);
// Microbatch j of step k as the run trains it: stepKKKK-mbJJ-inputs.npy and -labels.npy, and batches.json.
void write_numerics_batches(const std::string& dir, const executor::TrainingSetup& setup, int batches);
// Stage `stage`'s weights after its `step`-th optimizer step: weights-step-K/unitNN.NAME.npy for its units.
void write_numerics_stage_weights(const std::string& dir, int step, const executor::StagedModel& model,
                                  int stage, std::span<const float> parameters);

}  // namespace pipesim
