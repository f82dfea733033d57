#pragma once
// Units live in type names: the engine counts time in integer nanoseconds and memory in bytes.
#include <cmath>
#include <cstdint>
#include <limits>

namespace pipesim {

using TimeNs = std::int64_t;
using Bytes = std::int64_t;

inline constexpr TimeNs kNsPerMs = 1'000'000;
inline constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();

inline TimeNs ms_to_ns(double ms) {
  return static_cast<TimeNs>(std::llround(ms * 1e6));
}
inline double ns_to_ms(TimeNs ns) {
  return static_cast<double>(ns) / 1e6;
}
inline double ns_to_s(TimeNs ns) {
  return static_cast<double>(ns) / 1e9;
}

}  // namespace pipesim
