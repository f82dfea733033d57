#include "base/value_ranges.h"

#include <fmt/format.h>

#include <cmath>

#include "base/errors.h"

namespace pipesim {

std::string time_range_text() {
  return fmt::format(
      "a time in ms from 0 to {:g} ({:g} s; longer ops could overflow the run's integer "
      "nanoseconds)",
      kMaxTimeMs, kMaxTimeMs / 1e3);
}

std::string computed_time_range_text() {
  return fmt::format(
      "at most {:g} s ({:.1f} h; a longer computed op could overflow the run's integer "
      "nanoseconds)",
      static_cast<double>(kMaxComputedTimeNs) / 1e9, static_cast<double>(kMaxComputedTimeNs) / 1e9 / 3600);
}

bool computed_time_in_range(double ns) {
  return ns >= 0 && ns <= static_cast<double>(kMaxComputedTimeNs);
}

std::string bytes_range_text() {
  return fmt::format("a byte count from 0 to {:.0f} (1 TiB, so that sums over a run fit in 64 bits)",
                     kMaxBytes);
}

std::optional<TimeNs> checked_ms_to_ns(double ms) {
  if (!(ms >= 0 && ms <= kMaxTimeMs)) return std::nullopt;  // also NaN
  return ms_to_ns(ms);
}

std::optional<Bytes> checked_bytes(double bytes) {
  if (!(bytes >= 0 && bytes <= kMaxBytes)) return std::nullopt;
  return static_cast<Bytes>(std::llround(bytes));
}

Bytes computed_bytes(double bytes, const char* what) {
  constexpr double kLimit = 4611686018427387904.0;  // 2^62: four such values still sum inside int64
  if (!(bytes >= 0 && bytes <= kLimit)) {
    throw InputError(
        fmt::format("{}: {:.4g} bytes, beyond what pipesim counts (2^62 bytes); check the model's "
                    "sizes and the optimizer's state_bytes_per_param",
                    what, bytes));
  }
  return static_cast<Bytes>(std::llround(bytes));
}

TimeNs add_time_ns(TimeNs a, TimeNs b, const char* what) {
  TimeNs sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    throw InputError(
        fmt::format("{}: the simulated time passes {:.3g} s, beyond 64-bit nanoseconds; lower "
                    "the times or the run length",
                    what, static_cast<double>(kNever) / 1e9));
  }
  return sum;
}

}  // namespace pipesim
