#pragma once
// What each op kind waits for, reads, sends and holds: the one rule table of docs/design.md §2.
#include <cstdint>

#include "sim/action.h"

namespace pipesim {

// Bits of what has run of one (stage, microbatch): the engine's MicrobatchState::done.
inline constexpr std::uint8_t kForwardDone = 1;
inline constexpr std::uint8_t kInputGradDone = 2;   // I, or the input half of B
inline constexpr std::uint8_t kWeightGradDone = 4;  // W, or the weight half of B
inline constexpr std::uint8_t kAllDone = kForwardDone | kInputGradDone | kWeightGradDone;

// Where a microbatch op's input comes from and its output goes, in model order.
enum class Neighbour : std::uint8_t {
  kNone,
  kPrevious,  // the stage before: activations (none for the first stage)
  kNext,      // the stage after: gradients (none for the last stage)
};

// The dependency rules of one microbatch op kind (docs/design.md §2), in one table so that a new kind (a
// fused F&B, a recompute) is one more entry: the engine and the static timing pass (sim/fast/) both read it.
// U (an optimizer step) is not a microbatch op: it waits for its barrier and moves its stage's version.
struct OpRule {
  std::uint8_t needs_done = 0;              // bits of its own (stage, microbatch) that must be set first...
  OpKind needs_done_op = OpKind::F;         // ...by this op (named when the run deadlocks)
  Neighbour input_from = Neighbour::kNone;  // the transfer it waits for
  bool pins_forward_version = false;        // reads the version the plan pins (double buffering)
  std::uint8_t sets_done = 0;               // bits it sets when it ends
  Neighbour output_to = Neighbour::kNone;   // the transfer it sends when it ends
  bool holds_activations = false;  // starts holding the microbatch's activations (M_B): in flight from then
  bool frees_activations = false;  // ends holding them (frees M_B): no longer in flight
  int weight_grad_bytes_sign = 0;  // M_W when it ends: +1 kept (I), -1 freed (W)
  // Under stashed weights (PipeDream), reads the version its own forward read rather than the stage's latest.
  bool reads_stashed_version = false;
};

constexpr OpRule rule_of(OpKind kind) {
  switch (kind) {
    case OpKind::F:
      return {.input_from = Neighbour::kPrevious,
              .pins_forward_version = true,
              .sets_done = kForwardDone,
              .output_to = Neighbour::kNext,
              .holds_activations = true};
    case OpKind::B:
      return {.needs_done = kForwardDone,
              .needs_done_op = OpKind::F,
              .input_from = Neighbour::kNext,
              .sets_done = kInputGradDone | kWeightGradDone,
              .output_to = Neighbour::kPrevious,
              .frees_activations = true,
              .reads_stashed_version = true};
    case OpKind::I:
      return {.needs_done = kForwardDone,
              .needs_done_op = OpKind::F,
              .input_from = Neighbour::kNext,
              .sets_done = kInputGradDone,
              .output_to = Neighbour::kPrevious,
              .frees_activations = true,
              .weight_grad_bytes_sign = +1,
              .reads_stashed_version = true};
    case OpKind::W:
      return {.needs_done = kInputGradDone,
              .needs_done_op = OpKind::I,
              .sets_done = kWeightGradDone,
              .weight_grad_bytes_sign = -1,
              .reads_stashed_version = true};
    case OpKind::U:
      break;
  }
  return {};
}

}  // namespace pipesim
