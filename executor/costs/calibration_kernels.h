#pragma once
// The executor's own kernels, handed to `pipesim calibrate --cpu` (calibrate/cpu_calibrate.h) so that
// a CPU profile measures what the executor runs: its BLAS GEMM in the three operand layouts its ops use, its
// element-wise kernels per element, and its optimizer steps. CpuProfileCosts composes an op's time from the
// same names.
#include "calibrate/cpu_calibrate.h"

namespace pipesim::executor_kernels {

// Element-wise kernels, by the names a profile's elementwise_ns_per_element uses.
inline constexpr const char* kLayerNormForward = "layer_norm_forward";         // per element of x
inline constexpr const char* kLayerNormInputGrad = "layer_norm_input_grad";    // per element of dx
inline constexpr const char* kLayerNormWeightGrad = "layer_norm_weight_grad";  // per element of d(normed)
inline constexpr const char* kGeluForward = "gelu_forward";
inline constexpr const char* kGeluInputGrad = "gelu_input_grad";
inline constexpr const char* kBiasFill = "bias_fill";  // a new output matrix filled with the bias
inline constexpr const char* kBiasGrad = "bias_grad";  // column sums of dy
inline constexpr const char* kAdd = "add";             // the residual: y += x
inline constexpr const char* kCopy = "copy";           // a matrix saved for the backward (a new copy)
inline constexpr const char* kZeroFill = "zero_fill";  // a microbatch's new gradient buffer
inline constexpr const char* kSoftmaxCrossEntropy = "softmax_cross_entropy";  // per logit
// The teacher task's microbatch: per hash drawn (samples x input_width x (classes + 1)).
inline constexpr const char* kTeacherData = "teacher_data";

}  // namespace pipesim::executor_kernels

namespace pipesim {

// Sets the executor's GEMM (one BLAS thread), its layouts, its element-wise kernels and the updates of the
// optimizers whose step is linear in the parameters (SGD, AdamW, NAdam).
void use_executor_kernels(CpuCalibrationOptions& options);

}  // namespace pipesim
