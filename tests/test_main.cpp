// pipesim_tests' main: GoogleTest's, after giving OpenBLAS the kernels this CPU runs (executor/blas.h), so
// that the executor's tests train at the speed `pipesim` does.
#include <gtest/gtest.h>

#include "cli/process_setup.h"

int main(int argc, char** argv) {
  pipesim::prepare_process(argv);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
