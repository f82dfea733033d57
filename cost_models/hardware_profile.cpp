#include "cost_models/hardware_profile.h"

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

const GemmTable& HardwareProfile::gemm_table(const std::string& dtype) const {
  std::string have;
  for (const GemmTable& t : gemm) {
    if (t.dtype() == dtype) return t;
    have += (have.empty() ? "" : ", ") + t.dtype();
  }
  throw InputError(fmt::format("{}: hardware profile has no GEMM measurements for dtype '{}' (it has: {})",
                               source, dtype, have));
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
