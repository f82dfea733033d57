#pragma once
// The data sets a model trains on. Microbatch j of step k is a pure function of (seed, k, j) through the
// counter-based RNG: which samples (images, text windows) it holds does not depend on which worker asks,
// when, or in what order, so every schedule and the sequential reference see the same data.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "executor/corpus_readers.h"
#include "executor/teacher_data.h"
#include "executor/training_setup.h"

namespace pipesim::executor {

enum class DataSplit : std::uint8_t { kTrain, kValidation };

class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual std::string name() const = 0;
  // Columns of a microbatch's input: features, or (token_input) characters of context.
  virtual int input_width() const = 0;
  // Labels lie in [0, classes): classes, or the character vocabulary.
  virtual int classes() const = 0;
  virtual bool token_input() const = 0;
  virtual Microbatch<float> microbatch(std::uint64_t seed, int step, int index_in_batch, int samples,
                                       DataSplit split) const = 0;
};

// The synthetic teacher task (teacher_data.h) behind the Dataset interface.
class TeacherDataset final : public Dataset {
 public:
  TeacherDataset(int input_width, int classes) : input_width_(input_width), classes_(classes) {}
  std::string name() const override { return "teacher"; }
  int input_width() const override { return input_width_; }
  int classes() const override { return classes_; }
  bool token_input() const override { return false; }
  // The teacher's validation samples come from a different step range (negative steps).
  Microbatch<float> microbatch(std::uint64_t seed, int step, int index_in_batch, int samples,
                               DataSplit split) const override;

 private:
  int input_width_;
  int classes_;
};

// Images with labels, pixels scaled to [-1, 1]; train and validation sets apart (Fashion-MNIST's train and
// t10k files).
class ImageDataset final : public Dataset {
 public:
  ImageDataset(std::string name, ImageSet train, ImageSet validation);
  std::string name() const override { return name_; }
  int input_width() const override { return train_.pixels; }
  int classes() const override { return classes_; }
  bool token_input() const override { return false; }
  Microbatch<float> microbatch(std::uint64_t seed, int step, int index_in_batch, int samples,
                               DataSplit split) const override;

 private:
  std::string name_;
  ImageSet train_;
  ImageSet validation_;
  int classes_ = 0;
};

// What a text window predicts.
enum class TextTarget : std::uint8_t {
  kEveryPosition,  // labels: the next character after each of the context's characters (GPT; rows x context)
  kNextCharacter,  // label: the character after the window (character-input MLP; one per row)
};

// Character windows of a corpus: each sample is `context` characters from a random position of the train or
// the validation text. The vocabulary is every byte value found in either, in byte order.
class TextDataset final : public Dataset {
 public:
  TextDataset(std::string name, std::string train_text, std::string validation_text, int context,
              TextTarget target);
  std::string name() const override { return name_; }
  int input_width() const override { return context_; }
  int classes() const override { return static_cast<int>(vocabulary_.size()); }
  bool token_input() const override { return true; }
  Microbatch<float> microbatch(std::uint64_t seed, int step, int index_in_batch, int samples,
                               DataSplit split) const override;
  const std::string& vocabulary() const { return vocabulary_; }

 private:
  std::string name_;
  std::vector<int> train_ids_;
  std::vector<int> validation_ids_;
  std::string vocabulary_;
  int context_;
  TextTarget target_;
};

// Microbatch j (index_in_batch) of step k as `setup` trains it: its data set's, or the teacher task's.
Microbatch<float> training_microbatch(const TrainingSetup& setup, int step, int index_in_batch,
                                      DataSplit split = DataSplit::kTrain);

// Which sample of `population` the r-th row of microbatch j of step k draws (uniform, by the counter RNG).
std::size_t sample_index(std::uint64_t seed, int step, int index_in_batch, int row, std::size_t population,
                         DataSplit split);

// The corpora by name, read from their Debian packages: "fashion_mnist" (images), "austen" (Jane Austen's
// novels, "persuasion" held out for validation), "fortunes" (the last file held out), "snippet" (the
// public-domain passage in share/corpus/, for tests and quick runs). Text corpora need `context`, target.
std::shared_ptr<const Dataset> load_dataset(const std::string& name, int context, TextTarget target);
inline const std::vector<std::string>& dataset_names() {
  static const std::vector<std::string> names{"teacher", "fashion_mnist", "austen", "fortunes", "snippet"};
  return names;
}
// The text corpus split by name: all texts but `held_out` for training, `held_out` for validation.
TextDataset split_corpus(const std::string& name, const std::vector<NamedText>& texts,
                         const std::string& held_out, int context, TextTarget target);

}  // namespace pipesim::executor
