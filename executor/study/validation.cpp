#include "executor/study/validation.h"

#include "executor/datasets.h"
#include "executor/teacher_data.h"

namespace pipesim::executor {

namespace {
constexpr int kValidationStep = 2'000'000'000;  // far beyond any run's steps
}  // namespace

Evaluation evaluate(const StagedModel& model, const std::vector<std::vector<float>>& stage_parameters,
                    const TrainingSetup& setup, int samples) {
  Evaluation out;
  const int per_microbatch = setup.samples_per_microbatch;
  const int microbatches = std::max(1, samples / per_microbatch);
  std::vector<UnitCache<float>> caches;
  std::int64_t rows = 0;
  for (int j = 0; j < microbatches; ++j) {
    // A data set's held-out split; the teacher task's samples at steps no training run reaches.
    const Microbatch<float> mb =
        setup.data ? training_microbatch(setup, 0, j, DataSplit::kValidation)
                   : teacher_microbatch<float>(setup.seed, kValidationStep, j, per_microbatch,
                                               setup.shape.input_width, setup.shape.classes);
    Matrix<float> x = mb.inputs;
    for (std::size_t s = 0; s < model.stages.size(); ++s)
      x = model.stages[s].forward(stage_parameters[s], std::move(x), caches);
    Matrix<float> unused_gradient;
    out.loss += softmax_cross_entropy(x, mb.labels, unused_gradient);
    for (int r = 0; r < x.rows; ++r) {
      int best = 0;
      for (int c = 1; c < x.cols; ++c) {
        if (x.at(r, c) > x.at(r, best)) best = c;
      }
      if (best == mb.labels[r]) out.accuracy += 1.0;
    }
    rows += x.rows;  // a GPT predicts every position of its samples
  }
  out.loss /= microbatches;
  out.accuracy /= static_cast<double>(rows);
  return out;
}

}  // namespace pipesim::executor
