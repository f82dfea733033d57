#pragma once
// `pipesim calibrate --cpu`: the CUDA calibration's measurements, on the CPU, so the whole loop (measure,
// profile, predict) runs on any machine. One thread, as one pipeline stage of a CPU executor would use:
//   GEMM   an fp32 GEMM over a grid of (m, n, k), per operand layout (nn, nt, tn): the BLAS the executor
//          trains with when pipesim has the executor (executor/costs/calibration_kernels.h passes it in),
//          else a simple cache-blocked loop (nn only); on operands out of every cache level
//          (flush_bytes, evict_gemm_operands below), as a pipeline stage finds them after its other ops;
//   element-wise  the executor's own kernels (LayerNorm, GELU, bias, copies, ...), ns per element;
//   update the executor's U per optimizer: ns per parameter, plus per microbatch gradient summed;
//   copy   std::memcpy of a large buffer (bandwidth counts read + write);
//   launch dispatching an empty task to a worker thread and waiting for it (condition variables);
//   link   a handoff between two threads: latency of an empty message, bandwidth of a large memcpy'd one.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "calibrate/profile_writer.h"

namespace pipesim {

// Row-major C[m x n] = op(A) * op(B) in a layout of profile_writer.h ("nn", "nt", "tn"); A and B hold at
// least m*k and k*n values, C m*n.
using CpuGemm = std::function<void(const std::string& layout, const float* a, const float* b, float* c,
                                   long m, long n, long k)>;

// A kernel measured per element: `prepare(elements)` makes its inputs and returns the timed body.
struct CpuElementwiseKernel {
  std::string name;
  std::function<std::function<void()>(long elements)> prepare;
  long elements = 0;  // the size it is timed at; 0: CpuCalibrationOptions::elementwise_elements
};

// An optimizer's U: `prepare(parameters, gradients)` makes the stage and returns the timed step.
// Buffers a timed body reads from long ago (weights, gradients), evicted from every cache level before each
// run like the GEMMs' operands (evict_gemm_operands).
using CpuOperands = std::vector<std::pair<const void*, std::size_t>>;

// The optimizer step: `prepare(parameters, gradients, operands)` makes its buffers, lists them in `operands`
// (when not null) and returns the timed body.
struct CpuUpdateKernel {
  std::string optimizer;
  std::function<std::function<void()>(long parameters, int gradients, CpuOperands* operands)> prepare;
};

// Row-major C[m x n] = A[m x k] * B[k x n] (C is overwritten), blocked for the cache.
void blocked_gemm(const float* a, const float* b, float* c, long m, long n, long k);

// This machine's CPU as /proc/cpuinfo names it (a CPU profile's device name), and its vector extensions.
std::string this_cpu_model();
std::string this_cpu_vector_flags();

// 16 x the core's L2 (sysconf; 16 MiB when the system does not say). Chosen against the executor's own
// layers (2026-12-04, 2-core AMD EPYC VM, 1 MiB L2): after 4 MiB the calibrated GEMMs ran 8-10 % faster
// than the same GEMMs inside a residual MLP block; after 16 MiB within 0-5 %; 32 MiB and more cost the VM's
// kernel tens of seconds of system time per calibration.
double private_cache_flush_bytes();

struct CpuCalibrationOptions {
  std::vector<long> sizes = {32, 64, 128, 256, 512, 1024};  // the grid, for m, n and k alike
  int repeats = 5;                                          // timed runs per measurement; the median is kept
  int rounds = 3;  // GEMMs, element-wise kernels and updates measured this many times; the median is kept
  int warmups = 1;
  double copy_bytes = 64.0 * (1 << 20);
  std::string command;  // recorded in the profile's provenance
  CpuGemm gemm = [](const std::string&, const float* a, const float* b, float* c, long m, long n, long k) {
    blocked_gemm(a, b, c, m, n, k);
  };
  std::string gemm_name = "blocked fp32 GEMM (pipesim's own loop)";  // recorded in the provenance's notes
  std::vector<std::string> gemm_layouts = {"nn"};
  // Write this many bytes before each timed GEMM, element-wise and update run, so that it finds its operands
  // out of the caches as a pipeline stage's op does after the stage's other ops; 0: hot loops.
  double flush_bytes = private_cache_flush_bytes();
  // Before each GEMM run its operands are also evicted from every cache level (x86 clflush), whatever the
  // last-level cache's size: a stage's weights were written by a U ops back and its stashed activations by a
  // forward long before, and the stage's other layers (in a replay, the other stages) ran in between. With
  // the buffer flush alone (16 x L2) they stayed in a server's tens of MiB of L3 and the calibrated GEMMs ran
  // 5-17 % faster than the executor's (2026-12-04, this VM: N = 2 real and N = 8 replay). Evicting only the
  // weights and stashed operands came out no closer than evicting all three (a 10 % run-to-run spread here).
  bool evict_gemm_operands = true;
  std::vector<CpuElementwiseKernel> elementwise;
  long elementwise_elements = 64 * 1024;
  std::vector<CpuUpdateKernel> updates;
  long update_parameters = 1 << 20;
  int update_gradients = 8;  // U is timed summing 1 and this many gradients
  // Before each timed update run (after the flush and the operands' eviction) one byte is written in every
  // 4 KiB page of a buffer this large. A stage's U streams its parameters and gradients, thousands of pages,
  // once per batch, after the batch's other ops touched hundreds of MiB: their address translations are out
  // of the TLBs and caches too. With the data evicted alone the calibrated update ran 30-50 % faster than the
  // executor's U (0.87 against 1.30-1.41 ms at 526,080 parameters and 8 gradients, the same code; 0.92 ->
  // 1.12 / 1.31 ms after touching 512 MiB / 1 GiB of pages, 2026-12-05). 0: not done.
  double update_pages_touched_bytes = 1024.0 * (1 << 20);
};

// Small and fast: for tests and a first look.
CpuCalibrationOptions quick_cpu_calibration();

// Runs every measurement; `progress` gets one line per step.
pipesim_profile::ProfileData calibrate_cpu(const CpuCalibrationOptions& options,
                                           const std::function<void(const std::string&)>& progress);

}  // namespace pipesim
