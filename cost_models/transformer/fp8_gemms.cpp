#include "cost_models/transformer/fp8_gemms.h"

namespace pipesim::transformer {

double fp8_cast_bytes_per_element(Fp8Recipe recipe) {
  switch (recipe) {
    case Fp8Recipe::kNone:
      return 0;
    case Fp8Recipe::kTensorwise:
    case Fp8Recipe::kRowwise:
      return 6;  // the amax read, then the cast
    case Fp8Recipe::kDelayed:
    case Fp8Recipe::kBlockwise:
    case Fp8Recipe::kMxfp8:
      return 4;
  }
  return 0;
}

double fp8_cast_seconds(const TransformerModel& t, const Device& d, const std::vector<Gemm>& gemms) {
  const double per_element = fp8_cast_bytes_per_element(t.fp8);
  if (per_element == 0) return 0;
  double elements = 0, casts = 0;
  for (const Gemm& g : gemms) {
    if (g.core) continue;
    elements += g.m * g.count * g.k;
    ++casts;
  }
  return elements * per_element / d.bandwidth / d.elementwise_efficiency + casts * d.launch;
}

}  // namespace pipesim::transformer
