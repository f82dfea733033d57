#include "cli/training.h"

#include <fmt/format.h>

#include "cli/commands.h"
#include "executor/allocator.h"
#include "executor/blas.h"

namespace pipesim {

void add_training_commands(CLI::App& app) {
  add_execute_command(app);
  add_validate_command(app);
  add_train_command(app);
}

void prepare_training_process(char** argv) {
  executor::rerun_with_better_blas_kernels(argv);
  executor::keep_freed_tensors_for_reuse();
}

void use_training_gemm(CpuCalibrationOptions& options) {
  executor::use_single_blas_thread();
  options.gemm = [](const float* a, const float* b, float* c, long m, long n, long k) {
    executor::gemm(false, false, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
                   static_cast<int>(k), b, static_cast<int>(n), 0.0f, c, static_cast<int>(n));
  };
  options.gemm_name =
      fmt::format("OpenBLAS sgemm as the executor calls it (kernels: {})", executor::blas_core_name());
}

}  // namespace pipesim
