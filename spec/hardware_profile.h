#pragma once
// A hardware profile: what one device achieves, measured by pipesim's microbenchmarks (calibrate/) or
// fitted to published timings. GEMM throughput is a grid over (m, n, k) per dtype; between grid points it is
// interpolated, so small GEMMs (small microbatches) run at the lower rate the device really achieves.
// Format: calibrate/README.md; the reader is io/hardware_profile_reader.h. The writer is
// calibrate/profile_writer.h (shared with the CUDA program).
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/name_table.h"

namespace pipesim {

// Achieved throughput of C[m x n] = A[m x k] * B[k x n] over a full grid of sizes, for one dtype.
class GemmTable {
 public:
  // `tflops` is indexed [(im * n.size() + in) * k.size() + ik]; each size list is strictly increasing.
  GemmTable(std::string dtype, std::vector<double> m, std::vector<double> n, std::vector<double> k,
            std::vector<double> tflops);

  const std::string& dtype() const { return dtype_; }
  // Trilinear in log(m), log(n), log(k); exact at grid points. Above the grid the edge rate holds; below it,
  // the rate falls in proportion to the size (a GEMM too small to fill the device takes no less time).
  double tflops_at(double m, double n, double k) const;
  double seconds(double m, double n, double k) const;
  // The best rate anywhere on the grid: what a compute-bound kernel of this dtype can reach on the device.
  double best_tflops() const;
  // The same grid with every rate times `factor` (a fitted efficiency).
  GemmTable scaled(double factor) const;

  const std::vector<double>& m_sizes() const { return m_; }
  const std::vector<double>& n_sizes() const { return n_; }
  const std::vector<double>& k_sizes() const { return k_; }
  const std::vector<double>& rates() const { return tflops_; }  // TFLOP/s, indexed as the constructor's

 private:
  double at(size_t im, size_t in, size_t ik) const { return tflops_[(im * n_.size() + in) * k_.size() + ik]; }

  std::string dtype_;
  std::vector<double> m_, n_, k_;
  std::vector<double> tflops_;
};

// Row-major operand forms (calibrate/README.md): nn C = A*B, nt C = A*B^T, tn C = A^T*B.
enum class GemmLayout { kNN, kNT, kTN };

// What NCCL achieves on a node's GPU fabric: an all-reduce's bus bandwidth (nccl-tests' busbw: the algorithm
// bandwidth times 2 (p - 1) / p) against its buffer's size, measured on `ranks` GPUs. Small buffers are
// bound by latency and by NCCL's protocols, so the rate climbs with the size over several decades.
struct CollectiveCurve {
  int ranks = 8;
  std::vector<double> bytes;         // strictly increasing, > 0
  std::vector<double> bus_gb_per_s;  // > 0, one per size
  // An all-gather's or a reduce-scatter's bus bandwidth over an all-reduce's at the same size: below 1 where
  // NCCL speeds up the all-reduce alone (NVLink SHARP on NVSwitch systems).
  double gather_scatter_share = 1;
  std::string source;
  // The bus bandwidth of a collective over `group` ranks of a `bytes` buffer: the curve at the same bytes per
  // rank (bytes x ranks / group), a power law between points (linear in log-log); above the last point its
  // rate; below the first, the rate falls in proportion to the size (the first point's time holds:
  // latency-bound). Where the rate grows no faster than the size between points, time never falls as a
  // buffer grows.
  double bus_gb_per_s_at(double bytes, int group) const;
};

struct LinkSpec {
  double bandwidth_gb_per_s = 0;  // 1 GB/s = 1 byte/ns
  double latency_us = 0;
  std::string source;  // what was measured or assumed
  // Set on the link a collective inside a node runs on when the profile measured NCCL there
  // (HardwareProfile::intra_node_collectives); ring collectives then run at its bus bandwidth, not at the
  // α-β model's.
  std::shared_ptr<const CollectiveCurve> collectives;
};

// The FP8 GEMMs' rate as a multiple of bf16's at the same shape (a profile's `fp8_gemm:`), from a
// microbenchmark of both on the device; the reader adds "fp8" tables (each bf16 grid times it). 0: unknown.
struct Fp8GemmRate {
  double speedup_over_bf16 = 0;
  std::string source;
};

// Terms fitted to measured op or step times (`pipesim calibrate --fit`; a profile's `fit:` section), applied
// on top of the measured figures when the profile is read: the measurement stays in the file as measured.
struct ProfileFit {
  double gemm_efficiency = 1;  // every GEMM grid's TFLOP/s times this
  // Element-wise work divided by this: a transformer layer's element-wise passes (fused kernels move fewer
  // bytes than the passes assume), the CPU executor's kernels' ns per element; bandwidths stay as measured.
  double elementwise_efficiency = 1;
  // Flash attention's fused kernel: its rate over the causal work, as a share of the GEMM grid's best rate;
  // 0: the transformer model's default (cost_models/transformer/).
  double attention_efficiency = 0;
  double host_overhead_us = -1;  // replaces the profile's per-op host overhead; < 0: keep it
  std::string source;            // what it was fitted to and how well; empty: not fitted
  bool fitted() const { return !source.empty(); }
};

// Each transformer op's predicted time times a factor of its kind: a measured run's traced op times over the
// model's for the same configuration (`pipesim plan --trace-costs`; a scenario's hardware.op_time_scale),
// so that a search over other configurations starts from what the machine and its software really do.
struct OpTimeScale {
  double forward = 1;
  double backward_input = 1;
  double backward_weight = 1;
  std::string source;  // the trace and what was compared; empty: not scaled
  bool scaled() const { return !source.empty(); }
};

inline constexpr double kBytesPerGiB = 1024.0 * 1024.0 * 1024.0;

// What a profile's figures are (its provenance.kind): derived from data sheets (so an upper bound: no
// published run reaches them), fitted to public measurements (microbenchmarks, op times; never a training
// run's throughput), or measured by pipesim's microbenchmarks on the machine.
enum class ProfileKind { kSpecDerived, kFittedToPublished, kMeasured };
const NameTable<ProfileKind>& profile_kind_names();  // spec, published, measured

struct HardwareProfile {
  std::string name;    // file stem, e.g. a100-sxm4-80gb
  std::string source;  // the file it came from
  std::string device_name;
  std::string device_kind;                        // gpu or cpu
  std::map<std::string, std::string> provenance;  // command, date, driver, host, notes
  ProfileKind kind = ProfileKind::kMeasured;
  std::map<std::string, double> peak_tflops;  // datasheet, informative
  double memory_bandwidth_gb_per_s = 0;       // achieved copy bandwidth (read + write)
  double memory_capacity_gb = 0;              // device memory in GiB (2^30 bytes); 0 when unknown
  // GiB a run cannot use: CUDA context, communicator buffers, allocator fragmentation (hardware.reserve_gb in
  // a scenario; 0 in a profile file).
  double reserve_gb = 0;
  double launch_overhead_us = 0;
  // Per op the host issues and waits for (launch + synchronisation); 0 when not measured.
  double host_overhead_us = 0;
  // Element-wise kernels' and the optimizer step's achieved bandwidth (bytes read + written); 0 when not
  // measured, and then memory_bandwidth_gb_per_s stands in.
  double elementwise_gb_per_s = 0;
  double optimizer_gb_per_s = 0;
  // CPU profiles of the executor's kernels (pipesim calibrate --cpu): element-wise ns per element by kernel
  // name, and the optimizer step (U) per parameter by optimizer name; empty when not measured.
  struct UpdateCost {
    double step_ns = 0;          // per parameter
    double per_gradient_ns = 0;  // per parameter and microbatch gradient summed
  };
  std::map<std::string, double> elementwise_ns_per_element;
  std::map<std::string, UpdateCost> update_ns_per_parameter;
  std::optional<LinkSpec> link;             // absent when only one device was measured
  std::optional<LinkSpec> inter_node_link;  // between nodes; absent when unknown
  // NCCL's achieved all-reduce bus bandwidth inside a node (nccl-tests); absent: collectives inside a node
  // follow the α-β model on `link`.
  std::shared_ptr<const CollectiveCurve> intra_node_collectives;
  // Host <-> device copies: a transfer between devices without a peer link is staged through the host.
  std::optional<LinkSpec> host_to_device;
  std::optional<LinkSpec> device_to_host;
  std::vector<GemmTable> gemm;     // C = A * B (row-major operands)
  std::vector<GemmTable> gemm_nt;  // C = A * B^T; optional, per dtype
  std::vector<GemmTable> gemm_tn;  // C = A^T * B; optional, per dtype
  ProfileFit fit;                  // applied already (with_fit); kept to say so beside a figure
  Fp8GemmRate fp8_gemm;            // what the "fp8" tables were made from
  OpTimeScale op_time_scale;       // applied by the transformer model to each op it predicts

  double memory_capacity_bytes() const { return memory_capacity_gb * kBytesPerGiB; }
  // What activations, weights and optimizer state may fill: the capacity less the reserve; 0 when unknown.
  double usable_memory_bytes() const {
    return memory_capacity_gb > 0 ? (memory_capacity_gb - reserve_gb) * kBytesPerGiB : 0;
  }

  double elementwise_bandwidth_gb_per_s() const {
    return elementwise_gb_per_s > 0 ? elementwise_gb_per_s : memory_bandwidth_gb_per_s;
  }
  double optimizer_bandwidth_gb_per_s() const {
    return optimizer_gb_per_s > 0 ? optimizer_gb_per_s : memory_bandwidth_gb_per_s;
  }
  // What a stage-to-stage transfer goes over: the peer link, or, without one, the host's memory (device to
  // host, then host to device, one after the other: bandwidth 1 / (1/d2h + 1/h2d), the two latencies added);
  // none when the profile has neither.
  std::optional<LinkSpec> stage_link() const;

  // What the figures are, for every header that shows them: "spec: data-sheet figures, an upper bound",
  // "published: fitted to public measurements", "measured on NVIDIA H200 (host vm, 2026-12-04)".
  std::string kind_text() const;

  // Throws InputError naming the profile and the dtypes it has.
  const GemmTable& gemm_table(const std::string& dtype) const;
  // The grid of a transposed form when the profile measured it, else the plain one (`gemm_table`).
  const GemmTable& gemm_table(const std::string& dtype, GemmLayout layout) const;
};

// `raw` (a profile as measured, no fit applied) with `fit`'s terms applied: the GEMM grids scaled, the CPU
// kernels' per-element costs scaled, the host overhead replaced; `fit` is recorded (the transformer model
// reads its element-wise and attention terms from there).
// Throws InputError for a term out of range (efficiencies in (0, 10], overhead up to 1 s).
HardwareProfile with_fit(const HardwareProfile& raw, const ProfileFit& fit);

}  // namespace pipesim
