#include "executor/datasets.h"

#include <fmt/format.h>

#include <array>
#include <fstream>
#include <iterator>

#include "base/errors.h"
#include "io/data_dirs.h"

namespace pipesim::executor {
namespace {

constexpr std::uint64_t kSampleStream = 3;  // apart from the teacher's input and weight streams

std::vector<int> to_ids(const std::string& text, const std::array<int, 256>& id_of) {
  std::vector<int> ids(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) ids[i] = id_of[static_cast<std::uint8_t>(text[i])];
  return ids;
}

}  // namespace

std::size_t sample_index(std::uint64_t seed, int step, int index_in_batch, int row, std::size_t population,
                         DataSplit split) {
  const std::uint64_t h =
      hash_key({seed, kSampleStream, static_cast<std::uint64_t>(split), static_cast<std::uint64_t>(step),
                static_cast<std::uint64_t>(index_in_batch), static_cast<std::uint64_t>(row)});
  return static_cast<std::size_t>(h % population);
}

Microbatch<float> training_microbatch(const TrainingSetup& setup, int step, int index_in_batch,
                                      DataSplit split) {
  if (setup.data) {
    return setup.data->microbatch(setup.seed, step, index_in_batch, setup.samples_per_microbatch, split);
  }
  return TeacherDataset(setup.shape.input_width, setup.shape.classes)
      .microbatch(setup.seed, step, index_in_batch, setup.samples_per_microbatch, split);
}

Microbatch<float> TeacherDataset::microbatch(std::uint64_t seed, int step, int index_in_batch, int samples,
                                             DataSplit split) const {
  const int drawn_step = split == DataSplit::kTrain ? step : -1 - step;
  return teacher_microbatch<float>(seed, drawn_step, index_in_batch, samples, input_width_, classes_);
}

ImageDataset::ImageDataset(std::string name, ImageSet train, ImageSet validation)
    : name_(std::move(name)), train_(std::move(train)), validation_(std::move(validation)) {
  if (train_.count < 1 || validation_.count < 1 || train_.pixels != validation_.pixels) {
    throw InputError(fmt::format("{}: empty, or train and validation images of different sizes", name_));
  }
  for (const std::uint8_t label : train_.labels) classes_ = std::max(classes_, label + 1);
  for (const std::uint8_t label : validation_.labels) classes_ = std::max(classes_, label + 1);
}

Microbatch<float> ImageDataset::microbatch(std::uint64_t seed, int step, int index_in_batch, int samples,
                                           DataSplit split) const {
  const ImageSet& set = split == DataSplit::kTrain ? train_ : validation_;
  Microbatch<float> mb{Matrix<float>(samples, set.pixels), std::vector<int>(samples)};
  for (int r = 0; r < samples; ++r) {
    const std::size_t image = sample_index(seed, step, index_in_batch, r, set.count, split);
    const std::uint8_t* pixels = set.images.data() + image * set.pixels;
    for (int c = 0; c < set.pixels; ++c) mb.inputs.at(r, c) = static_cast<float>(pixels[c]) / 127.5F - 1.0F;
    mb.labels[r] = set.labels[image];
  }
  return mb;
}

TextDataset::TextDataset(std::string name, std::string train_text, std::string validation_text, int context,
                         TextTarget target)
    : name_(std::move(name)), context_(context), target_(target) {
  if (context < 1) throw InputError(fmt::format("{}: the context must be at least one character", name_));
  for (const std::string* text : {&train_text, &validation_text}) {
    if (text->size() < static_cast<std::size_t>(context) + 1) {
      throw InputError(fmt::format("{}: a text of {} characters is too short for a context of {}", name_,
                                   text->size(), context));
    }
  }
  std::array<bool, 256> seen{};
  for (const std::string* text : {&train_text, &validation_text}) {
    for (const char c : *text) seen[static_cast<std::uint8_t>(c)] = true;
  }
  std::array<int, 256> id_of{};
  for (int b = 0; b < 256; ++b) {
    if (!seen[b]) continue;
    id_of[b] = static_cast<int>(vocabulary_.size());
    vocabulary_.push_back(static_cast<char>(b));
  }
  train_ids_ = to_ids(train_text, id_of);
  validation_ids_ = to_ids(validation_text, id_of);
}

Microbatch<float> TextDataset::microbatch(std::uint64_t seed, int step, int index_in_batch, int samples,
                                          DataSplit split) const {
  const std::vector<int>& ids = split == DataSplit::kTrain ? train_ids_ : validation_ids_;
  const int labels_per_row = target_ == TextTarget::kEveryPosition ? context_ : 1;
  Microbatch<float> mb{Matrix<float>(samples, context_), std::vector<int>(samples * labels_per_row)};
  for (int r = 0; r < samples; ++r) {
    // A window of context + 1 characters: the inputs and, one further, what they predict.
    const std::size_t start = sample_index(seed, step, index_in_batch, r, ids.size() - context_, split);
    for (int t = 0; t < context_; ++t) mb.inputs.at(r, t) = static_cast<float>(ids[start + t]);
    if (target_ == TextTarget::kEveryPosition) {
      for (int t = 0; t < context_; ++t) mb.labels[r * context_ + t] = ids[start + t + 1];
    } else {
      mb.labels[r] = ids[start + context_];
    }
  }
  return mb;
}

TextDataset split_corpus(const std::string& name, const std::vector<NamedText>& texts,
                         const std::string& held_out, int context, TextTarget target) {
  std::string train;
  std::string validation;
  for (const NamedText& text : texts) (text.name == held_out ? validation : train) += text.text;
  if (validation.empty()) throw InputError(fmt::format("{}: no text named '{}' to hold out", name, held_out));
  return TextDataset(name, std::move(train), std::move(validation), context, target);
}

std::shared_ptr<const Dataset> load_dataset(const std::string& name, int context, TextTarget target) {
  if (name == "fashion_mnist") {
    return std::make_shared<ImageDataset>(name, read_idx_images(kFashionMnistDir, "train"),
                                          read_idx_images(kFashionMnistDir, "t10k"));
  }
  if (name == "austen") {
    const auto novels = read_r_character_vectors(kJaneAustenDataBase, "r-cran-janeaustenr");
    return std::make_shared<TextDataset>(split_corpus(name, novels, "persuasion", context, target));
  }
  if (name == "fortunes") {
    const auto files = read_fortunes(kFortunesDir);
    return std::make_shared<TextDataset>(split_corpus(name, files, files.back().name, context, target));
  }
  if (name == "snippet") {
    // The passage's last paragraph is held out.
    const std::string path = find_data_path("corpus/snippet.txt", "the snippet corpus");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError(fmt::format("cannot read {} (part of the repository)", path));
    const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    const std::size_t cut = text.rfind("\n\n");
    if (cut == std::string::npos) throw InputError(path + ": expected paragraphs separated by blank lines");
    return std::make_shared<TextDataset>(name, text.substr(0, cut + 2), text.substr(cut + 2), context,
                                         target);
  }
  throw InputError(fmt::format("unknown data set '{}'", name));
}

}  // namespace pipesim::executor
