#pragma once
// An action is one op of one stage on one microbatch: the unit a schedule emits and the engine runs.
#include <cstdint>
#include <string>

namespace pipesim {

// PyTorch's letters: F forward, B full backward, I backward for inputs, W backward for weights, U optimizer
// step.
enum class OpKind : std::uint8_t { F, B, I, W, U };

inline constexpr int kOpKinds = 5;

char op_letter(OpKind kind);
// Parses one of F, B, I, W, U; returns false for anything else.
bool parse_op_letter(char letter, OpKind& kind);

struct Action {
  OpKind kind = OpKind::F;
  // U only: the step waits until every device has reached its U of the same step (the all-reduce of a
  // global barrier). Without it, stages step independently (optimizer post-validation, async schedules).
  bool synchronized = false;
  int stage = 0;       // 0-based virtual stage (chunks count as stages)
  int microbatch = 0;  // global microbatch index; for U, the optimizer step index of that stage
  // An F fused with the device's next action, a backward of another microbatch (PyTorch's OVERLAP_F_B,
  // DualPipe's overlapped chunk): the two start together once both are ready and run back to back in one
  // slot of CostModel::overlapped_duration, split between them in proportion to their own durations.
  bool fused_with_next = false;

  friend bool operator==(const Action&, const Action&) = default;
};

inline Action forward(int stage, int microbatch) {
  return {OpKind::F, false, stage, microbatch};
}
inline Action backward(int stage, int microbatch) {
  return {OpKind::B, false, stage, microbatch};
}
inline Action backward_input(int stage, int microbatch) {
  return {OpKind::I, false, stage, microbatch};
}
inline Action backward_weight(int stage, int microbatch) {
  return {OpKind::W, false, stage, microbatch};
}
inline Action optimizer_step(int stage, int step, bool synchronized) {
  return {OpKind::U, synchronized, stage, step};
}

bool is_gradient_op(OpKind kind);  // B, I or W

// Human-readable, 1-based stage as in reports: "F(stage 3, mb 5)", "U(stage 2, step 0)".
std::string describe(const Action& action);

}  // namespace pipesim
