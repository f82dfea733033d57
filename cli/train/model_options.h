#pragma once
// The executor model's command-line options, shared by `pipesim execute` and `pipesim validate`.
#include <CLI/CLI.hpp>

#include "executor/training_setup.h"

namespace pipesim {

inline void add_model_options(CLI::App* cmd, executor::TrainingSetup& setup) {
  cmd->add_option("--width", setup.shape.width, "model width d (the MLP's hidden width is 4d)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--blocks", setup.shape.blocks, "residual MLP blocks (raised to stages - 2 if fewer)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  cmd->add_option("--samples", setup.samples_per_microbatch, "samples per microbatch")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
}

}  // namespace pipesim
