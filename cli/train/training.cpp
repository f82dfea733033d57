#include "cli/training.h"

#include <fmt/format.h>

#include "cli/commands.h"
#include "executor/allocator.h"
#include "executor/blas.h"
#include "executor/costs/calibration_kernels.h"

namespace pipesim {

void add_training_commands(CLI::App& app, const Limits& limits) {
  add_execute_command(app, limits);
  add_validate_command(app, limits);
  add_train_command(app, limits);
}

void prepare_training_process(char** argv) {
  executor::rerun_with_better_blas_kernels(argv);
  executor::keep_freed_tensors_for_reuse();
}

void use_training_kernels(CpuCalibrationOptions& options) {
  use_executor_kernels(options);
}

}  // namespace pipesim
