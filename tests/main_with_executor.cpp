// The main of the test executables that train (executor, train, cli): GoogleTest's, after giving OpenBLAS the
// kernels this CPU runs (executor/blas.h) and keeping freed tensors for reuse, so that the executor's tests
// train at the speed `pipesim` does. The other layers' tests use GoogleTest's own main.
#include <gtest/gtest.h>

#include "executor/allocator.h"
#include "executor/blas.h"

int main(int argc, char** argv) {
  pipesim::executor::rerun_with_better_blas_kernels(argv);
  pipesim::executor::keep_freed_tensors_for_reuse();
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
