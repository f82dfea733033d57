// pipesim_bench's main: Google Benchmark's, after giving OpenBLAS the kernels this CPU runs
// (executor/blas.h) and tuning the allocator (executor/allocator.h).
#include <benchmark/benchmark.h>

#include "cli/process_setup.h"

int main(int argc, char** argv) {
  pipesim::prepare_process(argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
