#include "cost_models/transformer/device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>

#include "base/errors.h"

namespace pipesim {

double flash_attention_efficiency(const HardwareProfile& profile) {
  return profile.fit.attention_efficiency > 0 ? profile.fit.attention_efficiency
                                              : kDefaultFlashAttentionEfficiency;
}

namespace transformer {

const GemmTable& layer_gemm_table(const TransformerSetup& setup, GemmLayout layout) {
  if (setup.model.fp8 == Fp8Recipe::kNone) return setup.profile.gemm_table(setup.model.dtype, layout);
  const bool has_fp8 = std::any_of(setup.profile.gemm.begin(), setup.profile.gemm.end(),
                                   [](const GemmTable& t) { return t.dtype() == "fp8"; });
  if (!has_fp8)
    throw InputError(fmt::format(
        "model.fp8 {}: hardware profile '{}' has no FP8 GEMM rate (add fp8_gemm: {{speedup_over_bf16: x, "
        "source: ...}} from an FP8 and a bf16 microbenchmark of the device, or calibrate one)",
        fp8_recipe_name(setup.model.fp8), setup.profile.name));
  return setup.profile.gemm_table("fp8", layout);
}

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
