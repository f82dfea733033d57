#include "spec/hardware_profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/errors.h"

namespace pipesim {
namespace {

// Where x falls on a sorted grid: the lower index, the weight of the upper point (log scale), and the factor
// by which the rate shrinks below the grid.
struct AxisPoint {
  size_t lo = 0;
  double t = 0;
  double scale = 1;
};

AxisPoint locate(const std::vector<double>& grid, double x) {
  if (x <= grid.front()) return {0, 0, x / grid.front()};
  if (x >= grid.back()) return {grid.size() - 1, 0, 1};
  const size_t hi = static_cast<size_t>(std::upper_bound(grid.begin(), grid.end(), x) - grid.begin());
  const size_t lo = hi - 1;
  return {lo, std::log(x / grid[lo]) / std::log(grid[hi] / grid[lo]), 1};
}

}  // namespace

GemmTable::GemmTable(std::string dtype, std::vector<double> m, std::vector<double> n, std::vector<double> k,
                     std::vector<double> tflops)
    : dtype_(std::move(dtype)),
      m_(std::move(m)),
      n_(std::move(n)),
      k_(std::move(k)),
      tflops_(std::move(tflops)) {
  if (m_.empty() || n_.empty() || k_.empty() || tflops_.size() != m_.size() * n_.size() * k_.size()) {
    throw InputError(fmt::format("GEMM table {}: the rates must fill the m x n x k grid", dtype_));
  }
}

double GemmTable::tflops_at(double m, double n, double k) const {
  const AxisPoint pm = locate(m_, m), pn = locate(n_, n), pk = locate(k_, k);
  double value = 0;
  for (int dm = 0; dm < 2; ++dm) {
    const double wm = dm ? pm.t : 1 - pm.t;
    if (wm == 0) continue;
    for (int dn = 0; dn < 2; ++dn) {
      const double wn = dn ? pn.t : 1 - pn.t;
      if (wn == 0) continue;
      for (int dk = 0; dk < 2; ++dk) {
        const double wk = dk ? pk.t : 1 - pk.t;
        if (wk == 0) continue;
        value += wm * wn * wk * at(pm.lo + dm, pn.lo + dn, pk.lo + dk);
      }
    }
  }
  return value * pm.scale * pn.scale * pk.scale;
}

double GemmTable::seconds(double m, double n, double k) const {
  if (m <= 0 || n <= 0 || k <= 0) return 0;
  return 2.0 * m * n * k / (tflops_at(m, n, k) * 1e12);
}

double GemmTable::best_tflops() const {
  double best = 0;
  for (double rate : tflops_) best = std::max(best, rate);
  return best;
}

GemmTable GemmTable::scaled(double factor) const {
  std::vector<double> rates = tflops_;
  for (double& rate : rates) rate *= factor;
  return GemmTable(dtype_, m_, n_, k_, std::move(rates));
}

HardwareProfile with_fit(const HardwareProfile& raw, const ProfileFit& fit) {
  auto check_efficiency = [&](double value, const char* name, bool zero_allowed) {
    if (!(value > 0 && value <= 10) && !(zero_allowed && value == 0)) {
      throw InputError(fmt::format("{}: fit.{} must be above 0 and at most 10{}, got {}", raw.source, name,
                                   zero_allowed ? " (or 0: the default)" : "", value));
    }
  };
  check_efficiency(fit.gemm_efficiency, "gemm_efficiency", false);
  check_efficiency(fit.elementwise_efficiency, "elementwise_efficiency", false);
  check_efficiency(fit.attention_efficiency, "attention_efficiency", true);
  if (!(fit.host_overhead_us <= 1e6)) {
    throw InputError(fmt::format("{}: fit.host_overhead_us must be at most 1e6 us, got {}", raw.source,
                                 fit.host_overhead_us));
  }
  HardwareProfile p = raw;
  for (std::vector<GemmTable>* grids : {&p.gemm, &p.gemm_nt, &p.gemm_tn}) {
    for (GemmTable& table : *grids) table = table.scaled(fit.gemm_efficiency);
  }
  // Element-wise work, not bandwidth: the bandwidth stays as measured (a fitted one could exceed the
  // memory's), and the transformer model divides its layers' element-wise time by the efficiency (fewer bytes
  // moved than its passes assume: fused kernels); the CPU executor's kernels take that much less per element.
  for (auto& [kernel, ns] : p.elementwise_ns_per_element) ns /= fit.elementwise_efficiency;
  if (fit.host_overhead_us >= 0) p.host_overhead_us = fit.host_overhead_us;
  p.fit = fit;
  return p;
}

const GemmTable& HardwareProfile::gemm_table(const std::string& dtype) const {
  std::string have;
  for (const GemmTable& t : gemm) {
    if (t.dtype() == dtype) return t;
    have += (have.empty() ? "" : ", ") + t.dtype();
  }
  throw InputError(fmt::format("{}: hardware profile has no GEMM measurements for dtype '{}' (it has: {})",
                               source, dtype, have));
}

const NameTable<ProfileKind>& profile_kind_names() {
  static const NameTable<ProfileKind> names = {{"spec", ProfileKind::kSpecDerived},
                                               {"published", ProfileKind::kFittedToPublished},
                                               {"measured", ProfileKind::kMeasured}};
  return names;
}

std::string HardwareProfile::kind_text() const {
  switch (kind) {
    case ProfileKind::kSpecDerived:
      return "spec: data-sheet figures, an upper bound";
    case ProfileKind::kFittedToPublished:
      return "published: fitted to public measurements";
    case ProfileKind::kMeasured:
      break;
  }
  const auto field = [&](const char* key) {
    const auto it = provenance.find(key);
    return it == provenance.end() ? std::string() : it->second;
  };
  const std::string host = field("host"), date = field("date").substr(0, 10);
  std::string where = host.empty() || host == "n/a" ? "" : "host " + host;
  if (!date.empty()) where += (where.empty() ? "" : ", ") + date;
  return fmt::format("measured on {}{}", device_name.empty() ? "an unnamed device" : device_name,
                     where.empty() ? "" : " (" + where + ")");
}

double CollectiveCurve::bus_gb_per_s_at(double buffer_bytes, int group) const {
  if (bytes.empty() || group < 1) return 0;
  const double x = buffer_bytes * ranks / group;  // the measured buffer with the same bytes per rank
  if (x <= bytes.front()) return bus_gb_per_s.front() * x / bytes.front();
  if (x >= bytes.back()) return bus_gb_per_s.back();
  const auto upper = std::upper_bound(bytes.begin(), bytes.end(), x);
  const size_t i = static_cast<size_t>(upper - bytes.begin());
  const double t = std::log(x / bytes[i - 1]) / std::log(bytes[i] / bytes[i - 1]);
  return bus_gb_per_s[i - 1] * std::pow(bus_gb_per_s[i] / bus_gb_per_s[i - 1], t);
}

std::optional<LinkSpec> HardwareProfile::stage_link() const {
  if (link) return link;
  if (!host_to_device || !device_to_host) return std::nullopt;
  LinkSpec staged;
  staged.bandwidth_gb_per_s =
      1 / (1 / device_to_host->bandwidth_gb_per_s + 1 / host_to_device->bandwidth_gb_per_s);
  staged.latency_us = device_to_host->latency_us + host_to_device->latency_us;
  staged.source = fmt::format("staged through host memory (no peer link): {}, then {}",
                              device_to_host->source, host_to_device->source);
  return staged;
}

const GemmTable& HardwareProfile::gemm_table(const std::string& dtype, GemmLayout layout) const {
  const std::vector<GemmTable>* transposed = layout == GemmLayout::kNT   ? &gemm_nt
                                             : layout == GemmLayout::kTN ? &gemm_tn
                                                                         : nullptr;
  if (transposed) {
    for (const GemmTable& t : *transposed) {
      if (t.dtype() == dtype) return t;
    }
  }
  return gemm_table(dtype);
}

}  // namespace pipesim
