#pragma once
// Validation of a pipeline's current weights on held-out samples of the training task: every stage's newest
// weights, the whole model forward, mean loss and accuracy.
#include <cstdint>
#include <vector>

#include "executor/training_setup.h"

namespace pipesim::executor {

struct Evaluation {
  double loss = 0;
  double accuracy = 0;  // fraction of samples whose largest logit is their label
};

// The held-out samples are the same for every run of a task, whatever its seed, schedule or microbatch
// size: drawn with kValidationSeed in chunks of kValidationChunkSamples (the last chunk smaller). A data
// set's samples come from its validation split; the teacher task's inputs from steps no training run
// reaches, labelled by the run's teacher (which its seed picks: the task itself).
inline constexpr std::uint64_t kValidationSeed = 20261204;
inline constexpr int kValidationChunkSamples = 32;

// The mean loss over the `samples` held-out samples (over their positions for a GPT) and the accuracy.
Evaluation evaluate(const StagedModel& model, const std::vector<std::vector<float>>& stage_parameters,
                    const TrainingSetup& setup, int samples);

}  // namespace pipesim::executor
