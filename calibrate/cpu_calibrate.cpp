#include "calibrate/cpu_calibrate.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#include <condition_variable>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <mutex>
#include <numeric>
#include <set>
#include <sstream>
#include <thread>

namespace pipesim {
namespace {

using Clock = std::chrono::steady_clock;

// The timed runs' seconds; `before` runs untimed ahead of each run (a cache flush).
template <typename Body, typename Before>
std::vector<double> run_seconds(int warmups, int repeats, Body body, Before before) {
  for (int i = 0; i < warmups; ++i) {
    before();
    body();
  }
  std::vector<double> seconds;
  for (int i = 0; i < repeats; ++i) {
    before();
    const auto start = Clock::now();
    body();
    seconds.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  return seconds;
}

template <typename Body, typename Before>
double median_seconds(int warmups, int repeats, Body body, Before before) {
  return pipesim_profile::median(run_seconds(warmups, repeats, body, before));
}

// The kernels a cost model adds up (GEMMs, element-wise kernels, updates) keep the mean of their runs: a
// pipeline's time is the sum of its ops' times, so their expected time, slow runs included, is what it
// accumulates. With medians the cost model ran 2-6 % short of every op's mean in the executor's runs
// (validate, 2026-12-05; README, "Validation against the executor"). Noise a whole round long still goes: the
// rounds' median is kept.
template <typename Body, typename Before>
double mean_seconds(int warmups, int repeats, Body body, Before before) {
  const std::vector<double> seconds = run_seconds(warmups, repeats, body, before);
  return std::accumulate(seconds.begin(), seconds.end(), 0.0) / static_cast<double>(seconds.size());
}

template <typename Body>
double median_seconds(int warmups, int repeats, Body body) {
  return median_seconds(warmups, repeats, body, [] {});
}

// Writes a buffer larger than the caches, so that the next kernel finds its operands in memory.
class CacheFlush {
 public:
  explicit CacheFlush(double bytes) : buffer_(static_cast<std::size_t>(bytes / sizeof(long))) {}
  void operator()() {
    for (std::size_t i = 0; i < buffer_.size(); i += 8) buffer_[i] += 1;  // one write per 64-byte line
    sink_ += buffer_.empty() ? 0 : buffer_[buffer_.size() / 2];
  }

 private:
  std::vector<long> buffer_;
  long sink_ = 0;
};

// Evicts [data, data + bytes) from every cache level (x86: clflush per 64-byte line), however large the
// last-level cache is. Elsewhere a no-op: the buffer flush stands alone.
void evict_from_caches(const void* data, std::size_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
  const char* p = static_cast<const char*>(data);
  for (std::size_t offset = 0; offset < bytes; offset += 64) _mm_clflush(p + offset);
  _mm_mfence();
#else
  (void)data;
  (void)bytes;
#endif
}

// A worker thread that runs one posted message at a time: the CPU's "kernel launch" and "link".
class Handoff {
 public:
  Handoff() : worker_([this] { loop(); }) {}
  ~Handoff() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    posted_.notify_one();
    worker_.join();
  }

  // Posts `bytes` from `src` for the worker to copy into `dst`, and waits until it has.
  void send(const char* src, char* dst, size_t bytes) {
    std::unique_lock<std::mutex> lock(mutex_);
    src_ = src;
    dst_ = dst;
    bytes_ = bytes;
    pending_ = true;
    posted_.notify_one();
    done_.wait(lock, [this] { return !pending_; });
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (true) {
      posted_.wait(lock, [this] { return pending_ || stop_; });
      if (stop_) return;
      if (bytes_ > 0) std::memcpy(dst_, src_, bytes_);
      pending_ = false;
      done_.notify_one();
    }
  }

  std::mutex mutex_;
  std::condition_variable posted_, done_;
  const char* src_ = nullptr;
  char* dst_ = nullptr;
  size_t bytes_ = 0;
  bool pending_ = false;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace

std::string this_cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "unknown CPU";
}

// The vector extensions the GEMM and element-wise kernels can use, from /proc/cpuinfo's flags.
std::string this_cpu_vector_flags() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    const std::set<std::string> present{std::istream_iterator<std::string>(words), {}};
    std::vector<std::string> found;
    for (const char* flag :
         {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_bf16", "amx_tile", "asimd", "sve"}) {
      if (present.count(flag)) found.emplace_back(flag);
    }
    return found.empty() ? "none of sse4_2/avx/avx2/fma/avx512f" : fmt::format("{}", fmt::join(found, " "));
  }
  return "unknown";
}

namespace {

std::string kernel_release() {
  std::ifstream version("/proc/sys/kernel/osrelease");
  std::string release;
  std::getline(version, release);
  return release.empty() ? "unknown" : release;
}

}  // namespace

double private_cache_flush_bytes() {
  const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  return l2 > 0 ? 16.0 * static_cast<double>(l2) : 16.0 * (1 << 20);
}

CpuCalibrationOptions quick_cpu_calibration() {
  CpuCalibrationOptions o;
  o.sizes = {16, 64};
  o.repeats = 3;
  o.warmups = 0;
  o.copy_bytes = 1 << 20;
  o.flush_bytes = 1 << 20;
  o.elementwise_elements = 1024;
  o.update_parameters = 4096;
  o.update_gradients = 2;
  o.update_pages_touched_bytes = 0;
  o.rounds = 1;
  return o;
}

void blocked_gemm(const float* a, const float* b, float* c, long m, long n, long k) {
  constexpr long kBlockM = 64, kBlockN = 256, kBlockK = 128;
  std::fill(c, c + m * n, 0.0f);
  for (long i0 = 0; i0 < m; i0 += kBlockM) {
    for (long p0 = 0; p0 < k; p0 += kBlockK) {
      for (long j0 = 0; j0 < n; j0 += kBlockN) {
        const long i1 = std::min(i0 + kBlockM, m), p1 = std::min(p0 + kBlockK, k),
                   j1 = std::min(j0 + kBlockN, n);
        for (long i = i0; i < i1; ++i) {
          float* c_row = c + i * n;
          for (long p = p0; p < p1; ++p) {
            const float a_ip = a[i * k + p];
            const float* b_row = b + p * n;
            for (long j = j0; j < j1; ++j) c_row[j] += a_ip * b_row[j];  // contiguous: vectorizes
          }
        }
      }
    }
  }
}

namespace {

using CpuCalibrateProgress = std::function<void(const std::string&)>;

// The provenance's notes: what was measured, how, and how often.
std::string cpu_calibrate_notes(const CpuCalibrationOptions& o) {
  return fmt::format(
      "one thread; GEMM: {}, layouts {}, {}; element-wise: {} kernels over {} elements; update: {} "
      "optimizers over {} parameters summing 1 and {} gradients{}; {} runs after {} warm-up(s): GEMMs, "
      "element-wise kernels and updates the mean of their runs (an op's expected time), the median of {} "
      "such rounds; the rest the median of the runs; "
      "copy: memcpy of {:.0f} MiB; launch: empty task to a worker thread and back (condition variables); "
      "link: the same handoff carrying a memcpy; times are wall clock on a machine that may be shared",
      o.gemm_name, fmt::join(o.gemm_layouts, "/"),
      o.flush_bytes > 0
          ? fmt::format("cold operands ({:.0f} MiB written before each run{})", o.flush_bytes / (1 << 20),
                        o.evict_gemm_operands ? "; GEMM operands also evicted from every cache level" : "")
          : std::string("hot loops"),
      o.elementwise.size(), o.elementwise_elements, o.updates.size(), o.update_parameters, o.update_gradients,
      o.update_pages_touched_bytes > 0
          ? fmt::format(" (a byte written in every page of {:.0f} MiB before each run)",
                        o.update_pages_touched_bytes / (1 << 20))
          : std::string(),
      o.repeats, o.warmups, o.rounds, o.copy_bytes / (1 << 20));
}

// A profile with this machine's provenance and no figures yet.
pipesim_profile::ProfileData cpu_calibrate_provenance(const CpuCalibrationOptions& o) {
  pipesim_profile::ProfileData p;
  p.device_name = this_cpu_model();
  p.device_kind = "cpu";
  p.command = o.command;
  p.date = pipesim_profile::utc_now();
  p.driver = fmt::format("Linux {}, {} hardware threads, vector flags: {}, compiled by {}", kernel_release(),
                         std::thread::hardware_concurrency(), this_cpu_vector_flags(), __VERSION__);
  char host[256] = "unknown";
  gethostname(host, sizeof host - 1);
  p.host = host;
  p.notes = cpu_calibrate_notes(o);
  return p;
}

// The launch overhead and the thread-to-thread link, on the copy's buffers.
void cpu_calibrate_handoffs(const CpuCalibrationOptions& o, std::vector<char>& src, std::vector<char>& dst,
                            pipesim_profile::ProfileData& p) {
  const size_t copy_bytes = src.size();
  Handoff handoff;
  p.launch_overhead_s =
      median_seconds(o.warmups + 10, o.repeats * 20, [&] { handoff.send(nullptr, nullptr, 0); });
  p.has_link = true;
  // A one-way message is half the round trip of an empty handoff.
  p.link.small_median_s = p.launch_overhead_s / 2;
  p.link.large_bytes = o.copy_bytes;
  p.link.large_median_s =
      p.link.small_median_s +
      median_seconds(o.warmups, o.repeats, [&] { handoff.send(src.data(), dst.data(), copy_bytes); }) -
      p.launch_overhead_s;
  p.link.source = "thread to thread in one process: condition-variable handoff, memcpy of the message";
}

// What every round's kernels share: the options, the cache flush, the pages the updates touch and the
// GEMMs' operands (sized for the largest of the grid).
struct CpuCalibrateRounds {
  const CpuCalibrationOptions& o;
  const CpuCalibrateProgress& progress;
  CacheFlush flush;
  std::vector<char> touched_pages;  // see update_pages_touched_bytes
  long largest;
  std::vector<float> a, b, c;
  int rounds;

  CpuCalibrateRounds(const CpuCalibrationOptions& options, const CpuCalibrateProgress& progress_in)
      : o(options),
        progress(progress_in),
        flush(options.flush_bytes),
        largest(*std::max_element(options.sizes.begin(), options.sizes.end())),
        a(largest * largest),
        b(largest * largest),
        c(largest * largest),
        // The whole set is measured `rounds` times and each figure is the median of its rounds' medians: on
        // a shared machine a burst of other work lasts seconds, longer than one figure's runs.
        rounds(std::max(1, options.rounds)) {
    for (size_t i = 0; i < a.size(); ++i) {
      a[i] = static_cast<float>((i * 7919) % 1000) / 500.0f - 1.0f;
      b[i] = static_cast<float>((i * 104729) % 1000) / 500.0f - 1.0f;
    }
  }

  void touch_pages() {
    constexpr std::size_t kPageBytes = 4096;
    for (std::size_t i = 0; i < touched_pages.size(); i += kPageBytes) touched_pages[i] += 1;
  }
};

// Every (m, n, k) of the grid per layout, each on operands from memory (see evict_gemm_operands).
void cpu_calibrate_gemms(CpuCalibrateRounds& s, int r, pipesim_profile::ProfileData& round) {
  const CpuCalibrationOptions& o = s.o;
  for (const std::string& layout : o.gemm_layouts) {
    for (long m : o.sizes) {
      s.progress(fmt::format("round {} of {}: fp32 GEMMs ({}) with m = {}", r + 1, s.rounds, layout, m));
      for (long n : o.sizes) {
        for (long k : o.sizes) {
          const auto cold = [&] {
            s.flush();
            if (!o.evict_gemm_operands || o.flush_bytes <= 0) return;
            evict_from_caches(s.a.data(), sizeof(float) * m * k);
            evict_from_caches(s.b.data(), sizeof(float) * k * n);
            evict_from_caches(s.c.data(), sizeof(float) * m * n);
          };
          const double seconds = mean_seconds(
              o.warmups, o.repeats, [&] { o.gemm(layout, s.a.data(), s.b.data(), s.c.data(), m, n, k); },
              cold);
          round.gemm.push_back({"fp32", m, n, k, seconds, layout});
        }
      }
    }
  }
}

void cpu_calibrate_elementwise(CpuCalibrateRounds& s, int r, pipesim_profile::ProfileData& round) {
  const CpuCalibrationOptions& o = s.o;
  if (!o.elementwise.empty())
    s.progress(fmt::format("round {} of {}: {} element-wise kernels", r + 1, s.rounds, o.elementwise.size()));
  for (const CpuElementwiseKernel& kernel : o.elementwise) {
    const long elements = kernel.elements > 0 ? kernel.elements : o.elementwise_elements;
    const std::function<void()> body = kernel.prepare(elements);
    const double seconds = mean_seconds(o.warmups, o.repeats, body, s.flush);
    round.elementwise_ns.emplace_back(kernel.name, seconds * 1e9 / static_cast<double>(elements));
  }
}

// One optimizer's step summing `gradients` gradients, ns per parameter: after the flush, its operands'
// eviction and the page touches.
double cpu_calibrate_update_ns(CpuCalibrateRounds& s, const CpuUpdateKernel& update, int gradients) {
  const CpuCalibrationOptions& o = s.o;
  CpuOperands operands;
  const std::function<void()> body = update.prepare(o.update_parameters, gradients, &operands);
  const auto cold = [&] {
    s.flush();
    if (o.evict_gemm_operands && o.flush_bytes > 0) {
      for (const auto& [data, bytes] : operands) evict_from_caches(data, bytes);
    }
    s.touch_pages();
  };
  return mean_seconds(o.warmups, o.repeats, body, cold) * 1e9 / static_cast<double>(o.update_parameters);
}

// Each optimizer's step at 1 and at update_gradients gradients: the step's own time and each gradient's.
void cpu_calibrate_updates(CpuCalibrateRounds& s, int r, pipesim_profile::ProfileData& round) {
  const CpuCalibrationOptions& o = s.o;
  // Allocated once (and its pages faulted in once), for the updates' page touches.
  if (!o.updates.empty() && o.update_pages_touched_bytes > 0 && s.touched_pages.empty())
    s.touched_pages.assign(static_cast<std::size_t>(o.update_pages_touched_bytes), 0);
  for (const CpuUpdateKernel& update : o.updates) {
    s.progress(fmt::format("round {} of {}: the {} update", r + 1, s.rounds, update.optimizer));
    double ns_per_parameter[2];
    const int gradients[2] = {1, std::max(2, o.update_gradients)};
    for (int i = 0; i < 2; ++i) ns_per_parameter[i] = cpu_calibrate_update_ns(s, update, gradients[i]);
    const double per_gradient =
        std::max(0.0, (ns_per_parameter[1] - ns_per_parameter[0]) / (gradients[1] - 1));
    round.updates.push_back(
        {update.optimizer, std::max(0.0, ns_per_parameter[0] - per_gradient), per_gradient});
  }
}

// Each figure the median of its rounds'.
void cpu_calibrate_take_medians(const std::vector<pipesim_profile::ProfileData>& results,
                                pipesim_profile::ProfileData& p) {
  const auto median_of_rounds = [&](auto value_of) {
    std::vector<double> values;
    for (const pipesim_profile::ProfileData& round : results) values.push_back(value_of(round));
    return pipesim_profile::median(values);
  };
  p.gemm = results[0].gemm;
  for (std::size_t i = 0; i < p.gemm.size(); ++i)
    p.gemm[i].seconds = median_of_rounds([&](const auto& round) { return round.gemm[i].seconds; });
  p.elementwise_ns = results[0].elementwise_ns;
  for (std::size_t i = 0; i < p.elementwise_ns.size(); ++i)
    p.elementwise_ns[i].second =
        median_of_rounds([&](const auto& round) { return round.elementwise_ns[i].second; });
  p.updates = results[0].updates;
  for (std::size_t i = 0; i < p.updates.size(); ++i) {
    p.updates[i].step_ns = median_of_rounds([&](const auto& round) { return round.updates[i].step_ns; });
    p.updates[i].per_gradient_ns =
        median_of_rounds([&](const auto& round) { return round.updates[i].per_gradient_ns; });
  }
}

}  // namespace

pipesim_profile::ProfileData calibrate_cpu(const CpuCalibrationOptions& o,
                                           const CpuCalibrateProgress& progress) {
  pipesim_profile::ProfileData p = cpu_calibrate_provenance(o);

  progress("memcpy bandwidth");
  const size_t copy_bytes = static_cast<size_t>(o.copy_bytes);
  std::vector<char> src(copy_bytes, 1), dst(copy_bytes, 0);
  p.copy = {o.copy_bytes,
            median_seconds(o.warmups, o.repeats, [&] { std::memcpy(dst.data(), src.data(), copy_bytes); })};

  progress("launch overhead and thread-to-thread link");
  cpu_calibrate_handoffs(o, src, dst, p);

  CpuCalibrateRounds state(o, progress);
  std::vector<pipesim_profile::ProfileData> results(state.rounds);
  for (int r = 0; r < state.rounds; ++r) {
    // Each measurement's runs are consecutive (after a flush each): spread over passes among the other
    // measurements, the buffers of all of them (150 MB with the updates') sat idle between runs, and this
    // VM's kernel (DAMON page-out) made idle memory slow to touch again: every figure came out 10-30 % slower
    // and twice as noisy (2026-12-04).
    cpu_calibrate_gemms(state, r, results[r]);
    cpu_calibrate_elementwise(state, r, results[r]);
    cpu_calibrate_updates(state, r, results[r]);
  }
  cpu_calibrate_take_medians(results, p);
  return p;
}

}  // namespace pipesim
