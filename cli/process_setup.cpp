#include "cli/process_setup.h"

#ifdef PIPESIM_HAS_EXECUTOR
#include "executor/allocator.h"
#include "executor/blas.h"
#endif

namespace pipesim {

void prepare_process([[maybe_unused]] char** argv) {
#ifdef PIPESIM_HAS_EXECUTOR
  executor::rerun_with_better_blas_kernels(argv);
  executor::keep_freed_tensors_for_reuse();
#endif
}

}  // namespace pipesim
