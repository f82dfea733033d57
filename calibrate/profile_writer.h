#pragma once
// Writes a pipesim hardware profile (format: calibrate/README.md) from raw benchmark timings.
// Header-only, standard library only, C++17: it is compiled by nvcc into the CUDA calibration program, by the
// C++ compiler into `pipesim calibrate --cpu`, and by the tests, which feed it fake timings and read the
// result back with pipesim's profile reader. Rates are derived here, in one place, from sizes and median
// times.
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace pipesim_profile {

inline constexpr const char* kFormat = "pipesim-hardware-profile-1";

// The time of one GEMM C[m x n] = op(A) * op(B) (2*m*n*k floating-point operations). Operands are
// row-major, as in the frameworks; the layout names the operand forms a training step uses:
//   nn  C = A[m x k] * B[k x n]
//   nt  C = A[m x k] * B[n x k]^T   (a linear layer's forward, X * W^T)
//   tn  C = A[k x m]^T * B[k x n]   (a weight gradient, dY^T * X)
struct GemmTiming {
  std::string dtype;  // bf16, fp16, fp32
  long m = 0;
  long n = 0;
  long k = 0;
  double seconds = 0;  // the calibrator's figure: the median of runs (CUDA), the mean of runs (CPU)
  std::string layout = "nn";
};

// The profile's key for a layout's grid: `gemm` (nn) or `gemm_nt` / `gemm_tn`.
inline std::string gemm_key(const std::string& layout) {
  return layout == "nn" ? "gemm" : "gemm_" + layout;
}

// A copy of `bytes` bytes that took `median_s`; bandwidth counts read + write (STREAM convention).
struct CopyTiming {
  double bytes = 0;
  double median_s = 0;
};

// Device-to-device transfers: latency of a tiny message, bandwidth of a large one.
struct LinkTiming {
  double small_median_s = 0;  // one small message (latency)
  double large_bytes = 0;
  double large_median_s = 0;  // one large message
  std::string source;         // what was measured, e.g. "cudaMemcpyPeerAsync GPU 0 -> GPU 1"
};

// A memory-bound kernel over `bytes` bytes moved (read + write) that took `median_s`.
struct StreamTiming {
  double bytes = 0;
  double median_s = 0;
  bool measured() const { return bytes > 0 && median_s > 0; }
};

// The executor's optimizer step (U) per parameter: `step_ns` plus `per_gradient_ns` for each microbatch
// gradient it sums.
struct UpdateTiming {
  std::string optimizer;
  double step_ns = 0;
  double per_gradient_ns = 0;
};

struct ProfileData {
  std::string device_name;
  std::string device_kind;  // "gpu" or "cpu"
  std::string command;      // the command line that produced it
  std::string date;         // ISO 8601
  std::string driver;       // driver / runtime / compiler versions
  std::string host;
  std::string notes;
  std::vector<std::pair<std::string, double>> peak_tflops;  // datasheet figures, optional
  CopyTiming copy;
  double memory_capacity_bytes = 0;  // device memory; 0: unknown (not written)
  double launch_overhead_s = 0;      // per kernel launch (CPU: per dispatched task)
  double host_overhead_s = 0;        // per op issued by the host and waited for; 0: not measured
  StreamTiming elementwise;          // an element-wise kernel (read one tensor, write one)
  StreamTiming optimizer;            // the optimizer step (AdamW: 28 bytes per parameter)
  // CPU: the executor's own element-wise kernels, ns per element, by name; and its U per optimizer.
  std::vector<std::pair<std::string, double>> elementwise_ns;
  std::vector<UpdateTiming> updates;
  bool has_link = false;
  LinkTiming link;
  bool has_host_links = false;  // host <-> device copies: the path of transfers staged through the host
  LinkTiming host_to_device;
  LinkTiming device_to_host;
  std::vector<GemmTiming> gemm;  // a full grid per dtype: every (m, n, k) of the lists used
};

// The median of a benchmark's timed runs (the calibrations keep medians, robust to a stray slow run).
inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// Now, as ISO 8601 UTC, for the provenance.
inline std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buffer;
}

inline double gemm_tflops(const GemmTiming& t) {
  return 2.0 * static_cast<double>(t.m) * static_cast<double>(t.n) * static_cast<double>(t.k) / t.seconds /
         1e12;
}

inline double copy_gb_per_s(const CopyTiming& c) {
  return 2.0 * c.bytes / c.median_s / 1e9;
}

// Bytes already count read + write.
inline double stream_gb_per_s(const StreamTiming& t) {
  return t.bytes / t.median_s / 1e9;
}

// Latency is the small message's time; bandwidth is the large message's bytes over its time beyond that
// latency.
inline double link_latency_us(const LinkTiming& l) {
  return l.small_median_s * 1e6;
}
inline double link_gb_per_s(const LinkTiming& l) {
  const double beyond = l.large_median_s - l.small_median_s;
  return l.large_bytes / (beyond > 0 ? beyond : l.large_median_s) / 1e9;
}

// A YAML double-quoted scalar.
inline std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Enough digits to read back the same value to ~1e-9 relative.
inline std::string number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.10g", value);
  return buffer;
}

// Throws nothing; validity (full grids, positive times) is the reader's job, so a broken benchmark shows up
// as a clear error when the profile is used.
inline std::string profile_yaml(const ProfileData& p) {
  std::ostringstream out;
  out << "# pipesim hardware profile; format: calibrate/README.md\n";
  out << "format: " << kFormat << "\n";
  out << "device: {name: " << quoted(p.device_name) << ", kind: " << p.device_kind << "}\n";
  out << "provenance:\n";
  out << "  command: " << quoted(p.command) << "\n";
  out << "  date: " << quoted(p.date) << "\n";
  out << "  driver: " << quoted(p.driver) << "\n";
  out << "  host: " << quoted(p.host) << "\n";
  out << "  kind: measured\n";
  out << "  notes: " << quoted(p.notes) << "\n";
  if (!p.peak_tflops.empty()) {
    out << "peak_tflops: {";
    for (size_t i = 0; i < p.peak_tflops.size(); ++i) {
      out << (i ? ", " : "") << p.peak_tflops[i].first << ": " << number(p.peak_tflops[i].second);
    }
    out << "}\n";
  }
  out << "memory_bandwidth_gb_per_s: " << number(copy_gb_per_s(p.copy)) << "\n";
  if (p.memory_capacity_bytes > 0)
    out << "memory_capacity_gb: " << number(p.memory_capacity_bytes / 1073741824.0) << "\n";  // GiB
  out << "launch_overhead_us: " << number(p.launch_overhead_s * 1e6) << "\n";
  if (p.host_overhead_s > 0) out << "host_overhead_us: " << number(p.host_overhead_s * 1e6) << "\n";
  if (p.elementwise.measured())
    out << "elementwise_gb_per_s: " << number(stream_gb_per_s(p.elementwise)) << "\n";
  if (p.optimizer.measured()) out << "optimizer_gb_per_s: " << number(stream_gb_per_s(p.optimizer)) << "\n";
  if (!p.elementwise_ns.empty()) {
    out << "elementwise_ns_per_element:\n";
    for (const auto& [name, ns] : p.elementwise_ns) out << "  " << name << ": " << number(ns) << "\n";
  }
  if (!p.updates.empty()) {
    out << "update_ns_per_parameter:\n";
    for (const UpdateTiming& u : p.updates) {
      out << "  " << u.optimizer << ": {step: " << number(u.step_ns)
          << ", per_gradient: " << number(u.per_gradient_ns) << "}\n";
    }
  }
  const auto write_link = [&](const char* key, const LinkTiming& l) {
    out << key << ": {bandwidth_gb_per_s: " << number(link_gb_per_s(l))
        << ", latency_us: " << number(link_latency_us(l)) << ", source: " << quoted(l.source) << "}\n";
  };
  if (p.has_link) write_link("link", p.link);
  if (p.has_host_links) {
    write_link("host_to_device", p.host_to_device);
    write_link("device_to_host", p.device_to_host);
  }
  for (const char* layout : {"nn", "nt", "tn"}) {
    std::vector<std::string> dtypes;
    for (const GemmTiming& t : p.gemm) {
      if (t.layout != layout) continue;
      bool seen = false;
      for (const std::string& d : dtypes) seen = seen || d == t.dtype;
      if (!seen) dtypes.push_back(t.dtype);
    }
    if (dtypes.empty()) continue;
    out << gemm_key(layout) << ":  # per dtype: [m, n, k, achieved TFLOP/s]\n";
    for (const std::string& dtype : dtypes) {
      out << "  " << dtype << ":\n";
      for (const GemmTiming& t : p.gemm) {
        if (t.dtype != dtype || t.layout != layout) continue;
        out << "    - [" << t.m << ", " << t.n << ", " << t.k << ", " << number(gemm_tflops(t)) << "]\n";
      }
    }
  }
  return out.str();
}

// Returns false with a message in `error` when the file cannot be written.
inline bool write_profile(const ProfileData& p, const std::string& path, std::string* error) {
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (file) file << profile_yaml(p);
  if (file) file.close();
  if (!file) {
    if (error) *error = path + ": cannot write the profile";
    return false;
  }
  return true;
}

}  // namespace pipesim_profile
