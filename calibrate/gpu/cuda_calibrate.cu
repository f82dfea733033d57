// pipesim-gpu-calibrate: measures one NVIDIA GPU and writes a pipesim hardware profile.
//
// Measures: cuBLAS GEMM throughput in bf16, fp16 and fp32 over a grid of (m, n, k) covering transformer
// shapes (bf16 also with a transposed operand, as the forward and weight-gradient GEMMs have it);
// device-to-device copy bandwidth; an element-wise kernel's and an AdamW kernel's bandwidth; kernel launch
// overhead and the per-op cost of a launch the host waits for; host <-> device copies (the path of transfers
// staged through the host); and, when there are two GPUs, peer-to-peer bandwidth and latency between GPU 0
// and GPU 1. Every time is the median of several runs after warm-up,
// measured with CUDA events (launch overhead: wall clock over many back-to-back launches). Every CUDA and
// cuBLAS call is checked.
//
// Needs only the CUDA toolkit (nvcc, cuBLAS). Build alone:
//   nvcc -O2 -std=c++17 -arch=native -o pipesim-gpu-calibrate calibrate/gpu/cuda_calibrate.cu -lcublas
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
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "../profile_writer.h"

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

// Row-major C[m x n] = op(A) * op(B) for a layout of profile_writer.h (nn, nt, tn), through column-major
// cuBLAS: a row-major X[r x c] is the column-major X^T, so C^T[n x m] = op(B)^T * op(A)^T is computed.
void row_major_gemm(cublasHandle_t handle, const std::string& layout, long m, long n, long k, const void* a,
                    const void* b, void* c, cudaDataType_t type) {
  const float alpha = 1, beta = 0;
  const bool a_transposed = layout == "tn", b_transposed = layout == "nt";
  // B: row-major [k x n] (ld n) or, transposed, [n x k] (ld k); A: row-major [m x k] (ld k) or [k x m] (ld
  // m).
  const cublasOperation_t op_b = b_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_a = a_transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ld_b = static_cast<int>(b_transposed ? k : n), ld_a = static_cast<int>(a_transposed ? m : k);
  CUBLAS_CHECK(cublasGemmEx(handle, op_b, op_a, static_cast<int>(n), static_cast<int>(m), static_cast<int>(k),
                            &alpha, b, type, ld_b, a, type, ld_a, &beta, c, type, static_cast<int>(n),
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// Every layout for bf16 (the training dtype); nn only for fp16 and fp32.
void measure_gemms(const Options& o, cudaStream_t stream, std::vector<pipesim_profile::GemmTiming>& out) {
  const std::vector<long> sizes = o.quick ? std::vector<long>{512, 2048, 8192}
                                          : std::vector<long>{256, 512, 1024, 2048, 4096, 8192, 16384};
  const long largest = sizes.back();
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));  // fp32 stays fp32 (no TF32)
  const DtypeInfo dtypes[] = {{"bf16", CUDA_R_16BF, 2}, {"fp16", CUDA_R_16F, 2}, {"fp32", CUDA_R_32F, 4}};
  for (const DtypeInfo& d : dtypes) {
    const size_t count = static_cast<size_t>(largest) * largest;
    void* a = alloc_filled(d, count, 1);
    void* b = alloc_filled(d, count, 2);
    void* c = alloc_filled(d, count, 3);
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<std::string> layouts = std::string(d.name) == "bf16"
                                                 ? std::vector<std::string>{"nn", "nt", "tn"}
                                                 : std::vector<std::string>{"nn"};
    for (const std::string& layout : layouts) {
      for (long m : sizes) {
        for (long n : sizes) {
          for (long k : sizes) {
            const double s = median_seconds(stream, o.warmups, o.repeats, [&] {
              row_major_gemm(handle, layout, m, n, k, a, b, c, d.type);
            });
            out.push_back({d.name, m, n, k, s, layout});
          }
        }
      }
      std::fprintf(stderr, "  gemm %s %s done\n", d.name, layout.c_str());
    }
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(b));
    CUDA_CHECK(cudaFree(c));
  }
  CUBLAS_CHECK(cublasDestroy(handle));
}

// tanh-approximated GeLU in bf16, two elements per thread per step: the shape of a framework's element-wise
// kernel (read one tensor, write one).
__global__ void gelu_bf16(const __nv_bfloat162* in, __nv_bfloat162* out, size_t pairs) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < pairs;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float2 x = __bfloat1622float2(in[i]);
    float2 y;
    y.x = 0.5f * x.x * (1.0f + tanhf(0.7978845608f * (x.x + 0.044715f * x.x * x.x * x.x)));
    y.y = 0.5f * x.y * (1.0f + tanhf(0.7978845608f * (x.y + 0.044715f * x.y * x.y * x.y)));
    out[i] = __float22bfloat162_rn(y);
  }
}

// AdamW on fp32 master weights, gradients and moments: reads 16 bytes and writes 12 per parameter.
__global__ void adamw_fp32(float* param, const float* grad, float* m1, float* m2, size_t count, float lr,
                           float beta1, float beta2, float eps, float decay, float c1, float c2) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const float g = grad[i];
    const float m = beta1 * m1[i] + (1 - beta1) * g;
    const float v = beta2 * m2[i] + (1 - beta2) * g * g;
    m1[i] = m;
    m2[i] = v;
    const float p = param[i];
    param[i] = p - lr * ((m / c1) / (sqrtf(v / c2) + eps) + decay * p);
  }
}

int grid_for(const cudaDeviceProp& prop) {
  return prop.multiProcessorCount * 8;
}

// GeLU over 2^28 bf16 values (512 MiB in, 512 MiB out): well past the L2.
pipesim_profile::StreamTiming measure_elementwise(const Options& o, cudaStream_t stream,
                                                  const cudaDeviceProp& prop) {
  const size_t count = o.quick ? size_t{1} << 24 : size_t{1} << 28;
  const DtypeInfo bf16{"bf16", CUDA_R_16BF, 2};
  void* in = alloc_filled(bf16, count, 4);
  void* out = alloc_filled(bf16, count, 5);
  CUDA_CHECK(cudaDeviceSynchronize());
  const double s = median_seconds(stream, o.warmups, o.repeats, [&] {
    gelu_bf16<<<grid_for(prop), 256, 0, stream>>>(static_cast<const __nv_bfloat162*>(in),
                                                  static_cast<__nv_bfloat162*>(out), count / 2);
    CUDA_CHECK(cudaGetLastError());
  });
  CUDA_CHECK(cudaFree(in));
  CUDA_CHECK(cudaFree(out));
  return {4.0 * static_cast<double>(count), s};
}

// AdamW over 2^27 parameters (2 GiB of state): the U of a stage, per byte.
pipesim_profile::StreamTiming measure_optimizer(const Options& o, cudaStream_t stream,
                                                const cudaDeviceProp& prop) {
  const size_t count = o.quick ? size_t{1} << 22 : size_t{1} << 27;
  const DtypeInfo fp32{"fp32", CUDA_R_32F, 4};
  float* buffers[4];
  for (int i = 0; i < 4; ++i) buffers[i] = static_cast<float*>(alloc_filled(fp32, count, 10 + i));
  CUDA_CHECK(cudaMemset(buffers[3], 0, count * sizeof(float)));  // v >= 0
  CUDA_CHECK(cudaDeviceSynchronize());
  const double s = median_seconds(stream, o.warmups, o.repeats, [&] {
    adamw_fp32<<<grid_for(prop), 256, 0, stream>>>(buffers[0], buffers[1], buffers[2], buffers[3], count,
                                                   1e-4f, 0.9f, 0.95f, 1e-8f, 0.1f, 0.5f, 0.5f);
    CUDA_CHECK(cudaGetLastError());
  });
  for (float* b : buffers) CUDA_CHECK(cudaFree(b));
  return {28.0 * static_cast<double>(count), s};
}

// Host <-> device copies from pinned host memory: latency of 8 bytes, bandwidth of 256 MiB. A transfer
// between GPUs without a peer link is staged through the host: device_to_host, then host_to_device.
void measure_host_links(const Options& o, cudaStream_t stream, pipesim_profile::LinkTiming& h2d,
                        pipesim_profile::LinkTiming& d2h) {
  const size_t large = size_t{256} << 20, small = 8;
  void *host = nullptr, *device = nullptr;
  CUDA_CHECK(cudaMallocHost(&host, large));
  CUDA_CHECK(cudaMalloc(&device, large));
  std::memset(host, 1, large);
  CUDA_CHECK(cudaMemset(device, 1, large));
  for (const bool up : {true, false}) {
    pipesim_profile::LinkTiming& t = up ? h2d : d2h;
    const cudaMemcpyKind kind = up ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
    void* dst = up ? device : host;
    const void* src = up ? host : device;
    t.small_median_s = median_seconds(stream, o.warmups, o.repeats * 5,
                                      [&] { CUDA_CHECK(cudaMemcpyAsync(dst, src, small, kind, stream)); });
    t.large_bytes = static_cast<double>(large);
    t.large_median_s = median_seconds(stream, o.warmups, o.repeats,
                                      [&] { CUDA_CHECK(cudaMemcpyAsync(dst, src, large, kind, stream)); });
    t.source = std::string("cudaMemcpyAsync ") + (up ? "pinned host -> device" : "device -> pinned host") +
               " (PCIe or the chip-to-chip link)";
  }
  CUDA_CHECK(cudaFreeHost(host));
  CUDA_CHECK(cudaFree(device));
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

// Empty kernels timed on the host, per kernel. Back to back (wait_each false): the cost of one launch when
// the GPU keeps up. Each waited for (cudaStreamSynchronize), as an executor that times each op does: the
// per-op cost beyond the launch that back-to-back launches hide.
double host_seconds_per_kernel(const Options& o, cudaStream_t stream, int kernels, bool wait_each) {
  std::vector<double> seconds;
  for (int r = 0; r < o.warmups + o.repeats; ++r) {
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kernels; ++i) {
      empty_kernel<<<1, 1, 0, stream>>>();
      if (wait_each) CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    if (r >= o.warmups) seconds.push_back(elapsed.count() / kernels);
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
      "cuBLAS GemmEx on row-major operands (gemm: A*B; gemm_nt: A*B^T and gemm_tn: A^T*B in bf16 only), "
      "fp32 accumulation, fp32 without TF32, inputs uniform in [-1, 1); medians of " +
      std::to_string(o.repeats) + " runs after " + std::to_string(o.warmups) +
      " warm-ups, CUDA events; copy: cudaMemcpyAsync D2D of 1 GiB; elementwise: a bf16 tanh-GeLU kernel over "
      "2^28 values (bytes read + written); optimizer: an fp32 AdamW kernel over 2^27 parameters, 28 bytes "
      "each; "
      "host links: cudaMemcpyAsync of 8 B (latency) and 256 MiB with pinned host memory; launch: 10000 "
      "back-to-back empty kernels, wall clock; host overhead: 2000 x (empty kernel + cudaStreamSynchronize), "
      "wall clock";

  cudaStream_t stream;
  CUDA_CHECK(cudaStreamCreate(&stream));
  std::fprintf(stderr, "measuring copy bandwidth and launch overhead\n");
  p.copy = measure_copy(o, stream);
  p.launch_overhead_s = host_seconds_per_kernel(o, stream, 10000, false);
  p.host_overhead_s = host_seconds_per_kernel(o, stream, 2000, true);
  std::fprintf(stderr, "measuring element-wise, optimizer and host transfers\n");
  p.elementwise = measure_elementwise(o, stream, prop);
  p.optimizer = measure_optimizer(o, stream, prop);
  p.has_host_links = true;
  measure_host_links(o, stream, p.host_to_device, p.device_to_host);
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
  std::printf(
      "wrote %s: copy %.0f GB/s, element-wise %.0f GB/s, AdamW %.0f GB/s, launch %.2f us, host overhead %.2f "
      "us, host->device %.1f GB/s + %.1f us, device->host %.1f GB/s + %.1f us%s\n",
      path.c_str(), pipesim_profile::copy_gb_per_s(p.copy), pipesim_profile::stream_gb_per_s(p.elementwise),
      pipesim_profile::stream_gb_per_s(p.optimizer), p.launch_overhead_s * 1e6, p.host_overhead_s * 1e6,
      pipesim_profile::link_gb_per_s(p.host_to_device), pipesim_profile::link_latency_us(p.host_to_device),
      pipesim_profile::link_gb_per_s(p.device_to_host), pipesim_profile::link_latency_us(p.device_to_host),
      p.has_link ? ", link measured" : ", one GPU: no link");
  return 0;
}
