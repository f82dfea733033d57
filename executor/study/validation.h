#pragma once
// Validation of a pipeline's current weights on held-out samples of the training task: every stage's newest
// weights, the whole model forward, mean loss and accuracy.
#include <vector>

#include "executor/training_setup.h"

namespace pipesim::executor {

struct Evaluation {
  double loss = 0;
  double accuracy = 0;  // fraction of samples whose largest logit is their label
};

// `samples` held-out samples in microbatches of the setup's size: steps no training run reaches (the
// teacher task's samples are a pure function of (seed, step, index)).
Evaluation evaluate(const StagedModel& model, const std::vector<std::vector<float>>& stage_parameters,
                    const TrainingSetup& setup, int samples);

}  // namespace pipesim::executor
