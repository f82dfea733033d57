#include "executor/scenario_training.h"

#include <fmt/format.h>

#include "base/errors.h"
#include "executor/datasets.h"

namespace pipesim::executor {

TrainingSetup training_setup_for(const ExecutorSection& section, TrainingSetup defaults) {
  TrainingSetup setup = std::move(defaults);
  ModelShape& shape = setup.shape;
  const std::string model = section.model.value_or("residual_mlp");
  const std::string data = section.data.value_or("teacher");
  shape.kind = model == "gpt" ? ModelKind::kGpt : ModelKind::kResidualMlp;
  shape.width = section.width.value_or(shape.width);
  shape.blocks = section.blocks.value_or(shape.blocks);
  shape.heads = section.heads.value_or(shape.heads);
  shape.embedding_width = section.embedding_width.value_or(shape.embedding_width);
  setup.samples_per_microbatch = section.samples.value_or(setup.samples_per_microbatch);
  setup.learning_rate = static_cast<float>(section.learning_rate.value_or(setup.learning_rate));
  setup.seed = static_cast<std::uint64_t>(section.seed.value_or(static_cast<std::int64_t>(setup.seed)));
  if (shape.kind == ModelKind::kGpt && !is_text_corpus(data)) {
    throw InputError(
        fmt::format("executor: model 'gpt' needs a text corpus ('austen', 'fortunes' or "
                    "'snippet'), not '{}'",
                    data));
  }
  if (shape.kind == ModelKind::kGpt && shape.width % shape.heads != 0) {
    throw InputError(
        fmt::format("executor: width {} is not a multiple of heads {}", shape.width, shape.heads));
  }
  if (data == "teacher") {
    setup.data = nullptr;
    shape.token_input = false;
    return setup;
  }
  const TextTarget target =
      shape.kind == ModelKind::kGpt ? TextTarget::kEveryPosition : TextTarget::kNextCharacter;
  setup.data = load_dataset(data, section.context.value_or(kDefaultContext), target);
  shape.input_width = setup.data->input_width();
  shape.classes = setup.data->classes();
  shape.token_input = setup.data->token_input();
  return setup;
}

}  // namespace pipesim::executor
