#pragma once
// The synthetic teacher task the tests train on (no data set package needed): inputs uniform in [-1, 1),
// label = argmax of a fixed random linear teacher. Microbatch j of step k is a pure function of
// (seed, k, j), so every schedule and every process sees the same samples. `input_seed` (default: seed)
// draws the inputs apart from the teacher: a held-out set shared by runs of different seeds.
#include <cstdint>
#include <optional>
#include <vector>

#include "executor/counter_rng.h"
#include "executor/tensor.h"

namespace pipesim::executor {

template <typename T>
struct Microbatch {
  Matrix<T> inputs;
  std::vector<int> labels;
};

template <typename T>
Microbatch<T> teacher_microbatch(std::uint64_t seed, int step, int index_in_batch, int samples,
                                 int input_width, int classes, std::optional<std::uint64_t> input_seed = {}) {
  constexpr std::uint64_t kInputStream = 1;
  constexpr std::uint64_t kTeacherStream = 2;
  Microbatch<T> mb{Matrix<T>(samples, input_width), std::vector<int>(samples, 0)};
  for (int r = 0; r < samples; ++r) {
    std::vector<double> x(input_width);
    for (int c = 0; c < input_width; ++c) {
      x[c] = symmetric_uniform({input_seed.value_or(seed), kInputStream, static_cast<std::uint64_t>(step),
                                static_cast<std::uint64_t>(index_in_batch), static_cast<std::uint64_t>(r),
                                static_cast<std::uint64_t>(c)});
      mb.inputs.at(r, c) = static_cast<T>(x[c]);
    }
    double best = 0;
    for (int k = 0; k < classes; ++k) {
      double score = 0;
      for (int c = 0; c < input_width; ++c) {
        score += x[c] * symmetric_uniform({seed, kTeacherStream, static_cast<std::uint64_t>(c),
                                           static_cast<std::uint64_t>(k)});
      }
      if (k == 0 || score > best) {
        best = score;
        mb.labels[r] = k;
      }
    }
  }
  return mb;
}

}  // namespace pipesim::executor
