#pragma once
// Plain training without a pipeline: per step, microbatches 0..m-1 run forward and backward through all
// stages in turn, their gradients are accumulated in microbatch order and one SGD step is applied. Every
// synchronous schedule must leave exactly these weights.
#include <vector>

#include "executor/training_setup.h"

namespace pipesim::executor {

// Final weights per stage after `steps` steps, the model split over `stages` like the pipeline's.
std::vector<std::vector<float>> train_sequentially(const TrainingSetup& setup, int stages, int steps);

}  // namespace pipesim::executor
