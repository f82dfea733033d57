#include "cli/process_setup.h"

#ifdef PIPESIM_HAS_EXECUTOR
#include "executor/blas.h"
#endif

namespace pipesim {

void prepare_process([[maybe_unused]] char** argv) {
#ifdef PIPESIM_HAS_EXECUTOR
  executor::rerun_with_better_blas_kernels(argv);
#endif
}

}  // namespace pipesim
