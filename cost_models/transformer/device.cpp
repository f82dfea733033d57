#include "cost_models/transformer/device.h"

#include <cassert>

namespace pipesim {

double flash_attention_efficiency(const HardwareProfile& profile) {
  return profile.fit.attention_efficiency > 0 ? profile.fit.attention_efficiency
                                              : kDefaultFlashAttentionEfficiency;
}

namespace transformer {

double gemm_seconds(const GemmTable& table, const std::vector<Gemm>& gemms, double attention_flops_per_s) {
  double seconds = 0;
  for (const Gemm& g : gemms) {
    if (g.flash_work > 0) {
      assert(attention_flops_per_s > 0);
      seconds += 2 * g.m * g.n * g.k * g.count * g.flash_work / attention_flops_per_s;
    } else {
      seconds += table.seconds(g.m * g.count, g.n, g.k);
    }
  }
  return seconds;
}

double weight_gemm_seconds(const GemmTable& table, const std::vector<Gemm>& gemms) {
  double seconds = 0;
  for (const Gemm& g : gemms) {
    if (!g.core) seconds += table.seconds(g.m * g.count, g.n, g.k);
  }
  return seconds;
}

double flops(const std::vector<Gemm>& gemms) {
  double total = 0;
  for (const Gemm& g : gemms) total += 2 * g.m * g.n * g.k * g.count;
  return total;
}

}  // namespace transformer
}  // namespace pipesim
