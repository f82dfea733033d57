// pipesim-gpu-calibrate: measures one NVIDIA GPU and writes a pipesim hardware profile.
//
// Measures: cuBLAS GEMM throughput in bf16, fp16 and fp32 over a grid of (m, n, k) covering transformer
// shapes; device-to-device copy bandwidth; kernel launch overhead; and, when there are two GPUs, peer-to-peer
// bandwidth and latency between GPU 0 and GPU 1. Every time is the median of several runs after warm-up,
// measured with CUDA events (launch overhead: wall clock over many back-to-back launches). Every CUDA and
// cuBLAS call is checked.
//
// Needs only the CUDA toolkit (nvcc, cuBLAS). Build alone:
//   nvcc -O2 -std=c++17 -arch=native -o pipesim-gpu-calibrate gpu_calibration/cuda_calibrate.cu -lcublas
// Run: pipesim-gpu-calibrate [-o PROFILE.yaml] [--device N] [--quick] [--repeats R]
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "profile_writer.h"

namespace {

// Exit code 2: no usable GPU; 1: a CUDA/cuBLAS call failed or bad arguments.
constexpr int kNoGpuExit = 2;

void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "pipesim-gpu-calibrate: %s:%d: %s failed: %s (%s)\n", file, line, call,
               cudaGetErrorString(status), cudaGetErrorName(status));
  std::exit(1);
}

void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "pipesim-gpu-calibrate: %s:%d: %s failed: cuBLAS status %d\n", file, line, call,
               static_cast<int>(status));
  std::exit(1);
}

#define CUDA_CHECK(call) check_cuda((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)

struct Options {
  std::string output;
  int device = 0;
  int repeats = 7;
  int warmups = 2;
  bool quick = false;
  std::string command;
};

[[noreturn]] void usage(const char* message) {
  std::fprintf(stderr,
               "pipesim-gpu-calibrate: %s\n"
               "usage: pipesim-gpu-calibrate [-o PROFILE.yaml] [--device N] [--quick] [--repeats R]\n",
               message);
  std::exit(1);
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 0; i < argc; ++i) o.command += (i ? " " : "") + std::string(argv[i]);
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
      return argv[++i];
    };
    if (arg == "-o" || arg == "--output") {
      o.output = value();
    } else if (arg == "--device") {
      o.device = std::atoi(value().c_str());
    } else if (arg == "--repeats") {
      o.repeats = std::max(1, std::atoi(value().c_str()));
    } else if (arg == "--quick") {
      o.quick = true;
    } else if (arg == "-h" || arg == "--help") {
      usage("calibrates one GPU and writes a pipesim hardware profile");
    } else {
      usage(("unknown argument " + arg).c_str());
    }
  }
  return o;
}

// Times `body` (which enqueues work on `stream`) with CUDA events: warm-ups first, then the median of
// repeats.
template <typename Body>
double median_seconds(cudaStream_t stream, int warmups, int repeats, Body body) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  for (int i = 0; i < warmups; ++i) body();
  CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> seconds;
  for (int i = 0; i < repeats; ++i) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    body();
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    seconds.push_back(ms * 1e-3);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  return pipesim_profile::median(seconds);
}

// Deterministic values in [-1, 1): GEMMs on zeros can run faster than on real data.
template <typename T>
__global__ void fill(T* data, size_t count, unsigned seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    unsigned x = static_cast<unsigned>(i) * 2654435761u + seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    data[i] = static_cast<T>(static_cast<float>(x & 0xffff) / 32768.0f - 1.0f);
  }
}

__global__ void empty_kernel() {}

struct DtypeInfo {
  const char* name;
  cudaDataType_t type;
  size_t bytes;
};

void* alloc_filled(const DtypeInfo& d, size_t count, unsigned seed) {
  void* p = nullptr;
  CUDA_CHECK(cudaMalloc(&p, count * d.bytes));
  if (d.type == CUDA_R_16BF) {
    fill<<<1024, 256>>>(static_cast<__nv_bfloat16*>(p), count, seed);
  } else if (d.type == CUDA_R_16F) {
    fill<<<1024, 256>>>(static_cast<__half*>(p), count, seed);
  } else {
    fill<<<1024, 256>>>(static_cast<float*>(p), count, seed);
  }
  CUDA_CHECK(cudaGetLastError());
  return p;
}

void measure_gemms(const Options& o, cudaStream_t stream, std::vector<pipesim_profile::GemmTiming>& out) {
  const std::vector<long> sizes = o.quick ? std::vector<long>{512, 2048, 8192}
                                          : std::vector<long>{256, 512, 1024, 2048, 4096, 8192, 16384};
  const long largest = sizes.back();
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));  // fp32 stays fp32 (no TF32)
  const DtypeInfo dtypes[] = {{"bf16", CUDA_R_16BF, 2}, {"fp16", CUDA_R_16F, 2}, {"fp32", CUDA_R_32F, 4}};
  const float alpha = 1, beta = 0;
  for (const DtypeInfo& d : dtypes) {
    const size_t count = static_cast<size_t>(largest) * largest;
    void* a = alloc_filled(d, count, 1);
    void* b = alloc_filled(d, count, 2);
    void* c = alloc_filled(d, count, 3);
    CUDA_CHECK(cudaDeviceSynchronize());
    for (long m : sizes) {
      for (long n : sizes) {
        for (long k : sizes) {
          // Column-major C[m x n] = A[m x k] * B[k x n], fp32 accumulation as in mixed-precision training.
          const double s = median_seconds(stream, o.warmups, o.repeats, [&] {
            CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(m),
                                      static_cast<int>(n), static_cast<int>(k), &alpha, a, d.type,
                                      static_cast<int>(m), b, d.type, static_cast<int>(k), &beta, c, d.type,
                                      static_cast<int>(m), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
          });
          out.push_back({d.name, m, n, k, s});
        }
      }
      std::fprintf(stderr, "  gemm %s m=%ld done\n", d.name, m);
    }
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(b));
    CUDA_CHECK(cudaFree(c));
  }
  CUBLAS_CHECK(cublasDestroy(handle));
}

pipesim_profile::CopyTiming measure_copy(const Options& o, cudaStream_t stream) {
  const size_t bytes = size_t{1} << 30;
  void *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaMalloc(&src, bytes));
  CUDA_CHECK(cudaMalloc(&dst, bytes));
  CUDA_CHECK(cudaMemset(src, 1, bytes));
  const double s = median_seconds(stream, o.warmups, o.repeats, [&] {
    CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
  });
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaFree(dst));
  return {static_cast<double>(bytes), s};
}

// Back-to-back empty kernels, timed on the host: the cost of one launch when the GPU keeps up.
double measure_launch_overhead(const Options& o, cudaStream_t stream) {
  constexpr int kLaunches = 10000;
  std::vector<double> seconds;
  for (int r = 0; r < o.warmups + o.repeats; ++r) {
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kLaunches; ++i) empty_kernel<<<1, 1, 0, stream>>>();
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    if (r >= o.warmups) seconds.push_back(elapsed.count() / kLaunches);
  }
  return pipesim_profile::median(seconds);
}

pipesim_profile::LinkTiming measure_p2p(const Options& o, int src_device, int dst_device) {
  int can_access = 0;
  CUDA_CHECK(cudaDeviceCanAccessPeer(&can_access, src_device, dst_device));
  const size_t large = size_t{256} << 20, small = 8;
  void *src = nullptr, *dst = nullptr;
  CUDA_CHECK(cudaSetDevice(dst_device));
  CUDA_CHECK(cudaMalloc(&dst, large));
  CUDA_CHECK(cudaSetDevice(src_device));
  if (can_access) {
    const cudaError_t status = cudaDeviceEnablePeerAccess(dst_device, 0);
    if (status == cudaErrorPeerAccessAlreadyEnabled) {
      CUDA_CHECK(cudaGetLastError());  // clears the sticky "already enabled" status
    } else {
      CUDA_CHECK(status);
    }
  }
  CUDA_CHECK(cudaMalloc(&src, large));
  CUDA_CHECK(cudaMemset(src, 1, large));
  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  pipesim_profile::LinkTiming t;
  t.small_median_s = median_seconds(stream, o.warmups, o.repeats * 5, [&] {
    CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, small, stream));
  });
  t.large_bytes = static_cast<double>(large);
  t.large_median_s = median_seconds(stream, o.warmups, o.repeats, [&] {
    CUDA_CHECK(cudaMemcpyPeerAsync(dst, dst_device, src, src_device, large, stream));
  });
  t.source = "cudaMemcpyPeerAsync GPU " + std::to_string(src_device) + " -> GPU " +
             std::to_string(dst_device) +
             (can_access ? " (peer access)" : " (no peer access: staged through the host)");
  CUDA_CHECK(cudaStreamDestroy(stream));
  CUDA_CHECK(cudaFree(src));
  CUDA_CHECK(cudaSetDevice(dst_device));
  CUDA_CHECK(cudaFree(dst));
  CUDA_CHECK(cudaSetDevice(src_device));
  return t;
}

std::string sanitized(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool keep = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
    if (keep)
      out += c;
    else if (c >= 'A' && c <= 'Z')
      out += static_cast<char>(c - 'A' + 'a');
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "gpu" : out;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_args(argc, argv);
  int devices = 0;
  const cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::fprintf(
        stderr,
        "pipesim-gpu-calibrate: no CUDA GPU available (%s); run it on a machine with an NVIDIA GPU and "
        "its driver. On any machine, `pipesim calibrate --cpu` measures the CPU instead.\n",
        status != cudaSuccess ? cudaGetErrorString(status) : "0 devices");
    return kNoGpuExit;
  }
  if (o.device < 0 || o.device >= devices) usage("--device is not a GPU index of this machine");
  CUDA_CHECK(cudaSetDevice(o.device));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device));
  int driver = 0, runtime = 0;
  CUDA_CHECK(cudaDriverGetVersion(&driver));
  CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  std::fprintf(stderr, "pipesim-gpu-calibrate: %s (%d SMs, %.1f GiB), %d GPU(s)\n", prop.name,
               prop.multiProcessorCount, prop.totalGlobalMem / double(1 << 30), devices);

  pipesim_profile::ProfileData p;
  p.device_name = prop.name;
  p.device_kind = "gpu";
  p.memory_capacity_bytes = static_cast<double>(prop.totalGlobalMem);
  p.command = o.command;
  p.date = pipesim_profile::utc_now();
  p.driver = "CUDA driver " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) +
             ", runtime " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) +
             ", compute capability " + std::to_string(prop.major) + "." + std::to_string(prop.minor);
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  p.host = host;
  p.notes =
      "cuBLAS GemmEx (column-major, no transposes, fp32 accumulation, fp32 without TF32); medians of " +
      std::to_string(o.repeats) + " runs after " + std::to_string(o.warmups) +
      " warm-ups, CUDA events; copy: cudaMemcpyAsync D2D of 1 GiB; launch: 10000 empty kernels, wall clock";

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  std::fprintf(stderr, "measuring copy bandwidth and launch overhead\n");
  p.copy = measure_copy(o, stream);
  p.launch_overhead_s = measure_launch_overhead(o, stream);
  if (devices >= 2) {
    std::fprintf(stderr, "measuring peer-to-peer transfers GPU 0 -> GPU 1\n");
    p.has_link = true;
    p.link = measure_p2p(o, 0, 1);
    CUDA_CHECK(cudaSetDevice(o.device));
  }
  std::fprintf(stderr, "measuring GEMMs\n");
  measure_gemms(o, stream, p.gemm);
  CUDA_CHECK(cudaStreamDestroy(stream));

  const std::string path = o.output.empty() ? sanitized(prop.name) + ".yaml" : o.output;
  std::string error;
  if (!pipesim_profile::write_profile(p, path, &error)) {
    std::fprintf(stderr, "pipesim-gpu-calibrate: %s\n", error.c_str());
    return 1;
  }
  std::printf("wrote %s: copy %.0f GB/s, launch %.2f us%s\n", path.c_str(),
              pipesim_profile::copy_gb_per_s(p.copy), p.launch_overhead_s * 1e6,
              p.has_link ? ", link measured" : ", one GPU: no link");
  return 0;
}
