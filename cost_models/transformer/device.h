#pragma once
// One GPU as the transformer's costs see it: its GEMM grid per phase, the bandwidths memory-bound kernels and
// the optimizer achieve, the launch overhead and flash attention's rate, all read from the setup's hardware
// profile; and the time a list of GEMMs takes on it (docs/design.md §6).
#include <vector>

#include "spec/hardware_profile.h"
#include "spec/transformer_model.h"

namespace pipesim {

// Flash attention's fused kernel runs its products (the causal share) at this share of the GEMM grid's best
// rate, unless the profile's fit says otherwise (fit.attention_efficiency). An assumption: FlashAttention-2
// reports about half of an A100's peak and more; PyTorch's SDPA flash kernel on an H200 fitted 0.25 alongside
// the element-wise term (calibrate/README.md, "The H200 measurement").
inline constexpr double kDefaultFlashAttentionEfficiency = 0.5;
double flash_attention_efficiency(const HardwareProfile& profile);

namespace transformer {

// C[m x n] = A[m x k] * B[k x n]; `count` independent copies (a strided batched GEMM) run as one GEMM with
// the batch stacked along m, which is how they fill the device.
struct Gemm {
  double m, n, k;
  double count = 1;
  // > 0: a product inside flash attention's fused kernel, which does this share of its FLOPs (a causal mask
  // skips the tiles above the diagonal) at the kernel's own rate, never writing the s x s scores.
  double flash_work = 0;
  // A product of the attention core (scores, their gradients), not of a weight matrix: tensor-parallel
  // collectives overlap only the weight GEMMs (parallel.overlap_tensor_comm).
  bool core = false;
};

// Seconds the GEMMs take on `table`; a product inside flash attention's kernel (flash_work > 0) runs at
// `attention_flops_per_s` (Device), the others at the grid's rate for their shape.
double gemm_seconds(const GemmTable& table, const std::vector<Gemm>& gemms, double attention_flops_per_s = 0);
// 2·m·n·k·count summed over the GEMMs.
double flops(const std::vector<Gemm>& gemms);
// Seconds the weight GEMMs among them (not the attention core's) take on `table`.
double weight_gemm_seconds(const GemmTable& table, const std::vector<Gemm>& gemms);

// The grid the layers' weight GEMMs run on in `layout`: the model dtype's, or with model.fp8 the profile's
// "fp8" grid (an InputError naming the profile and the key that adds one when it has none).
const GemmTable& layer_gemm_table(const TransformerSetup& setup, GemmLayout layout);

// What every part of the model needs from the setup.
// `bandwidth` is what memory-bound kernels achieve: the profile's element-wise kernel's when it measured one,
// else its copy bandwidth; `optimizer_bandwidth` likewise for the optimizer step. The GEMM grid per phase,
// with the frameworks' weights stored [out, in]: the forward X·Wᵀ (nt), the input gradient dY·W (nn), the
// weight gradient dYᵀ·X (tn); a profile without the transposed grids uses its plain one for all three.
// With FP8 training (model.fp8) the three grids of the layers' weight GEMMs are the profile's "fp8" ones; the
// output layer, the optimizer's GEMMs and the attention core's rate keep the model dtype's (the `dtype_`
// grids).
struct Device {
  const GemmTable& gemm;        // nn: the input gradient
  const GemmTable& forward;     // nt
  const GemmTable& weight;      // tn
  const GemmTable& dtype_gemm;  // in the model's dtype: the output layer, Newton-Schulz iterations
  const GemmTable& dtype_forward;
  const GemmTable& dtype_weight;
  double bandwidth;               // bytes/s
  double optimizer_bandwidth;     // bytes/s
  double launch;                  // s
  double bytes;                   // per element of the model's dtype
  double attention_flops_per_s;   // flash attention's fused kernel, over the work it does
  double elementwise_efficiency;  // the profile's fit: the layers' element-wise passes divided by this
  explicit Device(const TransformerSetup& setup)
      : gemm(layer_gemm_table(setup, GemmLayout::kNN)),
        forward(layer_gemm_table(setup, GemmLayout::kNT)),
        weight(layer_gemm_table(setup, GemmLayout::kTN)),
        dtype_gemm(setup.profile.gemm_table(setup.model.dtype)),
        dtype_forward(setup.profile.gemm_table(setup.model.dtype, GemmLayout::kNT)),
        dtype_weight(setup.profile.gemm_table(setup.model.dtype, GemmLayout::kTN)),
        bandwidth(setup.profile.elementwise_bandwidth_gb_per_s() * 1e9),
        optimizer_bandwidth(setup.profile.optimizer_bandwidth_gb_per_s() * 1e9),
        launch(setup.profile.launch_overhead_us * 1e-6),
        bytes(dtype_bytes(setup.model.dtype)),
        attention_flops_per_s(flash_attention_efficiency(setup.profile) * dtype_forward.best_tflops() * 1e12),
        elementwise_efficiency(setup.profile.fit.elementwise_efficiency) {}
};

}  // namespace transformer
}  // namespace pipesim
