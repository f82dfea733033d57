#pragma once
// `pipesim validate`'s cost-model prediction of the executor's residual MLP, a priori: from a CPU hardware
// profile (`pipesim calibrate --cpu`) and the model's shapes, never from the run being predicted.
//
// Each op is the sum of the kernels the executor runs for it (executor/layer_units.h, dense_ops.h,
// worker_numerics.cpp), each at the profile's measured cost, plus one dispatch in a real run (the profile's
// launch_overhead_us: handing an op to a worker). With b samples per microbatch:
//   linear in->out    F: copy(b·in) [the saved input], bias_fill(b·out), GEMM nn(b, out, in)
//                     I: copy(b·out) [the saved dy], GEMM nt(b, in, out)
//                     W: GEMM tn(in, out, b), bias_grad(b·out)
//   residual MLP d->h->d   F: layer_norm_forward(b·d), bias_fill(b·h), GEMM nn(b, h, d), gelu_forward(b·h),
//                          bias_fill(b·d), GEMM nn(b, d, h), add(b·d)
//                     I: GEMM nt(b, h, d), gelu_input_grad(b·h), GEMM nt(b, d, h),
//                        layer_norm_input_grad(b·d), add(b·d), copy(b·d)
//                     W: GEMM tn(h, d, b), bias_grad(b·d), GEMM tn(d, h, b), bias_grad(b·h),
//                        layer_norm_weight_grad(b·d)
//   every stage's F   teacher_data(b·input_width·(classes + 1)) (each F draws its microbatch's samples);
//                     the last stage's adds softmax_cross_entropy(b·classes)
//   every W           zero_fill(P) (the microbatch's own gradient buffer, P = the stage's parameters)
//   B = I + W;  U = P·(step + per_gradient·g) for the run's optimizer, g = the gradients one U sums (m for a
//   schedule that steps once per batch, 1 for one that steps per microbatch).
// A profile without the executor's kernels (older, or calibrated without the executor) falls back to the
// memory bandwidth for the buffer and the step ((g + 6) x 4 bytes per parameter) and leaves element-wise work
// out; missing_terms() names what was left out.
#include <array>
#include <string>
#include <vector>

#include "executor/training_setup.h"
#include "sim/cost_model.h"
#include "spec/hardware_profile.h"

namespace pipesim {

class CpuProfileCosts final : public CostModel {
 public:
  // `gradients_per_update[s]`: the microbatch gradients stage s's U sums (empty: m for every stage).
  // `dispatch`: charge each op the profile's launch overhead (a real run hands ops to worker threads;
  // replay's virtual clocks advance by ops' own CPU time and have none). Throws InputError for a model other
  // than the residual MLP on dense input.
  // `time_scale` multiplies every duration (validate's rescaling to the machine's probed speed).
  CpuProfileCosts(const HardwareProfile& profile, const executor::TrainingSetup& setup, int stages,
                  std::vector<double> gradients_per_update = {}, bool dispatch = true, double time_scale = 1);
  TimeNs duration(const Action& a) const override;
  bool durations_by_kind_and_stage() const override { return true; }
  Bytes activation_bytes(int) const override { return 0; }
  Bytes weight_grad_activation_bytes(int) const override { return 0; }
  Bytes transfer_bytes(int) const override { return 0; }

  double seconds(int stage, OpKind kind) const { return seconds_[stage][static_cast<int>(kind)]; }
  // What the profile lacked, e.g. "element-wise kernels (gelu_forward, ...)"; empty when nothing.
  const std::vector<std::string>& missing_terms() const { return missing_; }

 private:
  std::vector<std::array<double, kOpKinds>> seconds_;  // per stage, per op kind
  std::vector<std::string> missing_;
};

}  // namespace pipesim
