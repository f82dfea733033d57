#include "sim/action.h"

#include <fmt/format.h>

namespace pipesim {

char op_letter(OpKind kind) {
  switch (kind) {
    case OpKind::F:
      return 'F';
    case OpKind::B:
      return 'B';
    case OpKind::I:
      return 'I';
    case OpKind::W:
      return 'W';
    case OpKind::U:
      return 'U';
  }
  return '?';
}

bool parse_op_letter(char letter, OpKind& kind) {
  switch (letter) {
    case 'F':
      kind = OpKind::F;
      return true;
    case 'B':
      kind = OpKind::B;
      return true;
    case 'I':
      kind = OpKind::I;
      return true;
    case 'W':
      kind = OpKind::W;
      return true;
    case 'U':
      kind = OpKind::U;
      return true;
    default:
      return false;
  }
}

bool is_gradient_op(OpKind kind) {
  return kind == OpKind::B || kind == OpKind::I || kind == OpKind::W;
}

std::string describe(const Action& action) {
  if (action.kind == OpKind::U) {
    return fmt::format("U(stage {}, step {}{})", action.stage + 1, action.microbatch,
                       action.synchronized ? ", barrier" : "");
  }
  return fmt::format("{}(stage {}, mb {})", op_letter(action.kind), action.stage + 1, action.microbatch);
}

}  // namespace pipesim
