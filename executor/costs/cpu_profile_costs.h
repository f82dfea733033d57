#pragma once
// `pipesim validate`'s cost-model prediction of the executor's residual MLP, from a CPU hardware profile.
//
// Durations from the profile's fp32 GEMM table over the model's GEMMs (docs/design.md, "cost models"): a
// linear map in->out on b samples costs F = GEMM(b, out, in), I = GEMM(b, in, out), W = GEMM(in, out, b); a
// residual MLP unit is two such maps (d->4d, 4d->d); B = I + W. At the profile's copy bandwidth, W also fills
// its microbatch's own gradient buffer (zeroed, then written: 2 x 4 bytes per parameter; the executor keeps
// one per microbatch so that U sums them in microbatch order), and U copies the weights into a new version
// (read + write), sums the m gradients into a mean (m reads, one write) and steps (reads the weights and the
// mean, writes the weights): (m + 6) x 4 bytes per parameter. Element-wise work (LayerNorm, GELU, softmax) is
// not modelled: that is part of what the prediction tests.
#include <array>
#include <vector>

#include "cost_models/hardware_profile.h"
#include "executor/training_setup.h"
#include "sim/cost_model.h"

namespace pipesim {

class CpuProfileCosts final : public CostModel {
 public:
  // Throws InputError for a model other than the residual MLP on dense input.
  CpuProfileCosts(const HardwareProfile& profile, const executor::TrainingSetup& setup, int stages);
  TimeNs duration(const Action& a) const override;
  bool durations_by_kind_and_stage() const override { return true; }
  Bytes activation_bytes(int) const override { return 0; }
  Bytes weight_grad_activation_bytes(int) const override { return 0; }
  Bytes transfer_bytes(int) const override { return 0; }

 private:
  std::vector<std::array<double, kOpKinds>> seconds_;  // per stage, per op kind
};

}  // namespace pipesim
