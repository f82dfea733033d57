#include "executor/sequential_training.h"

#include "executor/datasets.h"

namespace pipesim::executor {

std::vector<std::vector<float>> train_sequentially(const TrainingSetup& setup, int stages, int steps,
                                                   const std::vector<bool>& one_step_delayed) {
  StagedModel model = build_staged_model(setup, stages);
  std::vector<std::vector<float>> params = model.initial_parameters;
  std::vector<std::vector<float>> previous = params;  // W(k−1), what a delayed stage reads
  const auto delayed = [&](int s) {
    return s < static_cast<int>(one_step_delayed.size()) && one_step_delayed[s];
  };
  const auto read = [&](int s) -> const std::vector<float>& { return delayed(s) ? previous[s] : params[s]; };
  std::vector<StageUpdater> updaters;
  for (int s = 0; s < stages; ++s) updaters.push_back(make_stage_updater(setup, model, s));
  const int m = setup.microbatches_per_batch;
  for (int step = 0; step < steps; ++step) {
    // grads[s][j]: stage s's gradient of microbatch j.
    std::vector<std::vector<std::vector<float>>> grads(stages);
    for (int j = 0; j < m; ++j) {
      const Microbatch<float> mb = training_microbatch(setup, step, j);
      std::vector<std::vector<UnitCache<float>>> caches(stages);
      Matrix<float> x = mb.inputs;
      for (int s = 0; s < stages; ++s) x = model.stages[s].forward(read(s), std::move(x), caches[s]);
      Matrix<float> dy;
      softmax_cross_entropy(x, mb.labels, dy);
      for (int s = stages - 1; s >= 0; --s) {
        dy = model.stages[s].backward_input(read(s), std::move(dy), caches[s]);
        grads[s].emplace_back(params[s].size(), 0.0F);
        model.stages[s].backward_weight(caches[s], grads[s].back());
      }
    }
    for (int s = 0; s < stages; ++s) {
      std::vector<const std::vector<float>*> in_order;
      for (const auto& g : grads[s]) in_order.push_back(&g);
      if (delayed(s)) previous[s] = params[s];
      updaters[s].update(params[s], in_order);
    }
  }
  return params;
}

}  // namespace pipesim::executor
