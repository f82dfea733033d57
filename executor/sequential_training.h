#pragma once
// Plain training without a pipeline: per step, microbatches 0..m-1 run forward and backward through all
// stages in turn, their gradients are accumulated in microbatch order and one SGD step is applied. Every
// synchronous schedule must leave exactly these weights.
#include <vector>

#include "executor/training_setup.h"

namespace pipesim::executor {

// Final weights per stage after `steps` steps, the model split over `stages` like the pipeline's. Stages
// marked in `one_step_delayed` take a delayed gradient, as under double buffering (2BW, WPipe's first half):
// step k's forward and backward read the version before the newest, W(k−1) (W(0) at step 0), and the
// gradient updates the newest: W(k+1) = W(k) − η∇f(W(k−1)).
std::vector<std::vector<float>> train_sequentially(const TrainingSetup& setup, int stages, int steps,
                                                   const std::vector<bool>& one_step_delayed = {});

}  // namespace pipesim::executor
