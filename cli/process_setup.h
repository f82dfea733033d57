#pragma once
// What every pipesim program (the CLI, the tests, the benchmarks) does first in main.
namespace pipesim {

// Gives OpenBLAS the kernels this CPU runs when it fell back to generic ones (executor/blas.h: may run the
// program again with OPENBLAS_CORETYPE set) and keeps freed tensors in the heap for reuse
// (executor/allocator.h); nothing when the executor is not built.
void prepare_process(char** argv);

}  // namespace pipesim
