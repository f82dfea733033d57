#pragma once
// How the executor's U op updates a stage: the optimizer, its learning-rate schedule and an optional delay
// correction for asynchronous schedules (docs/design.md, "Optimizers and delay correction").
#include <cstdint>
#include <string>
#include <vector>

#include "spec/optimizer_kind.h"

namespace pipesim::executor {

// The one optimizer enum (spec/optimizer_kind.h), as the executor names it.
using pipesim::OptimizerKind;

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::kSgd;
  float momentum = 0.0F;  // SGD: heavy-ball momentum (0: plain SGD, no state); Muon: Nesterov momentum
  float beta1 = 0.9F;     // AdamW, NAdam and Muon's AdamW part; Lion's interpolation; Adan's m decay
  float beta2 = 0.95F;    // Lion's momentum decay; Adan's gradient-difference decay
  float beta3 = 0.99F;    // Adan's second-moment decay
  float epsilon = 1e-8F;
  float weight_decay = 0.0F;        // decoupled (W -= lr * lambda * W), on matrices only
  float adamw_lr_ratio = 1.0F;      // Muon: learning rate of its AdamW part over that of its matrices
  int newton_schulz_steps = 5;      // Muon
  float shampoo_beta = 0.95F;       // SOAP: decay of its preconditioners L = E[G G^T], R = E[G^T G]
  int precondition_frequency = 10;  // SOAP: steps between eigendecompositions of L and R
};

// Linear warm-up to the peak, then cosine decay to floor_ratio * peak. Progress is counted in microbatches
// whose gradients the stage has applied, so that schedules updating per microbatch (PipeDream) and per batch
// (a flush) follow the same curve per sample. total_microbatches == 0: a constant learning rate.
struct LrSchedule {
  double warmup_fraction = 0.0;
  double floor_ratio = 1.0;
  std::int64_t total_microbatches = 0;
  // The learning rate of a step after which `applied_microbatches` gradients have been applied in all.
  float at(float peak, std::int64_t applied_microbatches) const;
};

enum class DelayCorrection {
  kNone,
  kErrorFeedback,     // W <- W - lr * (2 u_t - u_{t-1})
  kWeightPrediction,  // a forward reads W_t - tau * lr * u_t, tau: the stage's last observed delay
};

OptimizerKind parse_optimizer_kind(const std::string& name);  // throws std::invalid_argument
std::string optimizer_kind_name(OptimizerKind kind);
DelayCorrection parse_delay_correction(const std::string& name);  // throws std::invalid_argument
std::string delay_correction_name(DelayCorrection correction);
// The optimizer with its authors' defaults where they differ from the struct's (AdamW's beta1 0.9, beta2
// 0.95): Muon's momentum 0.95, Lion's beta2 0.99, Adan's betas 0.98 and 0.92, SOAP's 0.95 and 0.95.
OptimizerConfig optimizer_with_defaults(OptimizerKind kind);
std::vector<std::string> optimizer_kind_names();    // sgd, adamw, nadam, muon, lion, adan, soap
std::vector<std::string> delay_correction_names();  // none, error-feedback, weight-prediction

}  // namespace pipesim::executor
