#include "executor/study/validation.h"

#include <algorithm>

#include "executor/datasets.h"
#include "executor/teacher_data.h"

namespace pipesim::executor {

namespace {
constexpr int kValidationStep = 2'000'000'000;  // far beyond any run's steps
}  // namespace

Evaluation evaluate(const StagedModel& model, const std::vector<std::vector<float>>& stage_parameters,
                    const TrainingSetup& setup, int samples) {
  Evaluation out;
  std::vector<UnitCache<float>> caches;
  double loss_sum = 0;  // summed over rows (each chunk's mean times its rows)
  std::int64_t rows = 0;
  const int total = std::max(1, samples);
  for (int first = 0, j = 0; first < total; first += kValidationChunkSamples, ++j) {
    const int chunk = std::min(kValidationChunkSamples, total - first);
    const Microbatch<float> mb =
        setup.data ? setup.data->microbatch(kValidationSeed, 0, j, chunk, DataSplit::kValidation)
                   : teacher_microbatch<float>(setup.seed, kValidationStep, j, chunk, setup.shape.input_width,
                                               setup.shape.classes, kValidationSeed);
    Matrix<float> x = mb.inputs;
    for (std::size_t s = 0; s < model.stages.size(); ++s)
      x = model.stages[s].forward(stage_parameters[s], std::move(x), caches);
    Matrix<float> unused_gradient;
    loss_sum += softmax_cross_entropy(x, mb.labels, unused_gradient) * x.rows;
    for (int r = 0; r < x.rows; ++r) {
      int best = 0;
      for (int c = 1; c < x.cols; ++c) {
        if (x.at(r, c) > x.at(r, best)) best = c;
      }
      if (best == mb.labels[r]) out.accuracy += 1.0;
    }
    rows += x.rows;  // a GPT predicts every position of its samples
  }
  out.loss = loss_sum / static_cast<double>(rows);
  out.accuracy /= static_cast<double>(rows);
  return out;
}

}  // namespace pipesim::executor
