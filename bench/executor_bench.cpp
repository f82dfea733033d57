// The executor's speed: GFLOP/s of one worker's GEMMs (OpenBLAS, one thread) against the CPU profile's fp32
// GEMM table at the same shape (the profile measures pipesim's own blocked kernel, `pipesim calibrate
// --cpu`).
#ifdef PIPESIM_HAS_EXECUTOR
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "executor/blas.h"
#include "io/hardware_profile_reader.h"
#include "pipesim_source_dir.h"

namespace pipesim {
namespace {

void BM_ExecutorGemm(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  executor::use_single_blas_thread();
  std::vector<float> a(static_cast<std::size_t>(n) * n, 0.5F), b(a.size(), 0.25F), c(a.size(), 0.0F);
  for (auto _ : state) {
    executor::gemm(false, false, n, n, n, 1.0F, a.data(), n, b.data(), n, 0.0F, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  const double flops = 2.0 * n * n * n;
  state.counters["GFLOP_per_s"] =
      benchmark::Counter(flops * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
  const HardwareProfile profile =
      load_hardware_profile(std::string(PIPESIM_SOURCE_DIR) + "/gpu_calibration/profiles/cpu-vm.yaml");
  state.counters["profile_GFLOP_per_s"] = profile.gemm_table("fp32").tflops_at(n, n, n) * 1e3;
}
BENCHMARK(BM_ExecutorGemm)->ArgName("n")->Arg(256)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pipesim
#endif
