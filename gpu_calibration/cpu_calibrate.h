#pragma once
// `pipesim calibrate --cpu`: the CUDA calibration's measurements, on the CPU, so the whole loop (measure,
// profile, predict) runs on any machine. One thread, as one pipeline stage of a CPU executor would use:
//   GEMM   an fp32 GEMM over a grid of (m, n, k): the BLAS the executor trains with when pipesim has the
//          executor (cli/command_calibrate.cpp passes it in), else a simple cache-blocked loop;
//   copy   std::memcpy of a large buffer (bandwidth counts read + write);
//   launch dispatching an empty task to a worker thread and waiting for it (condition variables);
//   link   a handoff between two threads: latency of an empty message, bandwidth of a large memcpy'd one.
#include <functional>
#include <string>
#include <vector>

#include "gpu_calibration/profile_writer.h"

namespace pipesim {

// Row-major C[m x n] = A[m x k] * B[k x n] (C is overwritten).
using CpuGemm = std::function<void(const float* a, const float* b, float* c, long m, long n, long k)>;

// Row-major C[m x n] = A[m x k] * B[k x n] (C is overwritten), blocked for the cache.
void blocked_gemm(const float* a, const float* b, float* c, long m, long n, long k);

struct CpuCalibrationOptions {
  std::vector<long> sizes = {32, 64, 128, 256, 512, 1024};  // the grid, for m, n and k alike
  int repeats = 5;                                          // timed runs per measurement; the median is kept
  int warmups = 1;
  double copy_bytes = 64.0 * (1 << 20);
  std::string command;  // recorded in the profile's provenance
  CpuGemm gemm = blocked_gemm;
  std::string gemm_name = "blocked fp32 GEMM (pipesim's own loop)";  // recorded in the provenance's notes
};

// Small and fast: for tests and a first look.
CpuCalibrationOptions quick_cpu_calibration();

// Runs every measurement; `progress` gets one line per step.
pipesim_profile::ProfileData calibrate_cpu(const CpuCalibrationOptions& options,
                                           const std::function<void(const std::string&)>& progress);

}  // namespace pipesim
