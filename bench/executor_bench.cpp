// The executor's speed: GFLOP/s of one worker's GEMMs (OpenBLAS, one thread) against the CPU profile's fp32
// GEMM table at the same shape (`pipesim calibrate --cpu` measures the same OpenBLAS call when the executor
// is built), and the executor's own cost per op (choosing it, taking in its inputs, sending its outputs) as a
// fraction of ops of a few milliseconds, in real mode with two workers.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "executor/blas.h"
#include "io/hardware_profile_reader.h"
#include "io/scenario.h"
#include "pipesim_source_dir.h"
#include "train/execute.h"

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
      load_hardware_profile(std::string(PIPESIM_SOURCE_DIR) + "/share/profiles/cpu-vm.yaml");
  state.counters["profile_GFLOP_per_s"] = profile.gemm_table("fp32").tflops_at(n, n, n) * 1e3;
}
BENCHMARK(BM_ExecutorGemm)->ArgName("n")->Arg(256)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond);

// Real mode, threads transport, N = 2 (one pinned worker per core on a 2-core machine), a residual MLP of
// width 256 and two blocks on the teacher task, 256 samples per microbatch: ops of about 5 ms. Overhead
// per op is measured by the workers themselves (ExecutedOp::overhead_ns: the time between ops not spent
// blocked, plus the sends), so waiting for a neighbour is not counted as overhead.
void BM_ExecutorOverheadPerOp(benchmark::State& state, const char* schedule) {
  const Scenario scenario = parse_scenario(
      "name: overhead\npipeline: {stages: 2, microbatches: 8, batches: 2}\n"
      "costs: {forward_ms: 1, backward_input_ms: 1, backward_weight_ms: 1}\n",
      "executor_bench", {});
  ExecuteOptions options;
  options.mode = ExecuteMode::kReal;
  options.setup.shape = {.input_width = 256, .width = 256, .blocks = 2, .classes = 10};
  options.setup.samples_per_microbatch = static_cast<int>(state.range(0));
  double op_ns = 0, overhead_ns = 0, ops = 0;
  for (auto _ : state) {
    const ExecutedSchedule run =
        execute_schedule(scenario, {schedule, ScheduleParams("executor_bench")}, options);
    for (const executor::ExecutedOp& op : run.result.ops) {
      op_ns += static_cast<double>(op.end_ns - op.start_ns - op.overhead_ns);
      overhead_ns += static_cast<double>(op.overhead_ns);
      ops += 1;
    }
  }
  state.counters["op_ms"] = op_ns / ops / 1e6;
  state.counters["overhead_us_per_op"] = overhead_ns / ops / 1e3;
  state.counters["overhead_pct"] = 100.0 * overhead_ns / op_ns;
}
BENCHMARK_CAPTURE(BM_ExecutorOverheadPerOp, 1f1b_flush, "1f1b-flush")
    ->ArgName("samples")
    ->Arg(256)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ExecutorOverheadPerOp, pipedream, "pipedream")
    ->ArgName("samples")
    ->Arg(256)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ExecutorOverheadPerOp, zb_h1, "zb-h1")
    ->ArgName("samples")
    ->Arg(256)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace pipesim
