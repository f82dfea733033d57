#pragma once
// The ranges every time and byte value read from input (a scenario, a command-line option) must lie in, so
// that no sum the engine forms over a run can overflow its int64 nanoseconds and bytes. README.md
// ("Limits") states them. The engine also checks its own sums (sim/engine/engine.cpp), as a backstop.
#include <optional>
#include <string>

#include "base/units.h"

namespace pipesim {

// One time value (an op's duration, a latency, a transfer's wire time): at most 1e5 ms = 100 s = 1e11 ns.
// A run's makespan is at most the sum of its op and transfer times, and int64 ns hold 9.2e18 ns, so any run
// of fewer than 9.2e7 such values (far above what the resource ceiling admits) cannot overflow.
inline constexpr double kMaxTimeMs = 1e5;
inline constexpr TimeNs kMaxTimeNs = static_cast<TimeNs>(kMaxTimeMs) * kNsPerMs;

// One time the model or the engine computes rather than reads: a transformer op from its FLOPs and bytes (a
// large model's gradient reduction over a slow link takes minutes), a link transfer's wire time, a noisy op.
// At most 1000 times a read value: 1e5 s (27.8 h) = 1e14 ns. int64 ns hold 92,233 such values, fewer than a
// long run's ops: there the engine's checked sums (add_time_ns, every op's end and transfer's arrival) stop a
// run whose clock would pass 9.2e9 s (292 years) with an error, never a wrapped time.
inline constexpr TimeNs kMaxComputedTimeNs = 1000 * kMaxTimeNs;

// One byte value (activations, parameters, a transfer): at most 2^40 bytes = 1 TiB, so that sums of up to
// 2^23 (8.4 million) of them fit in int64 bytes.
inline constexpr double kMaxBytes = 1099511627776.0;

// What the readers say is allowed, e.g. "a time in ms from 0 to 100000 (100 s)".
std::string time_range_text();
std::string computed_time_range_text();  // "at most 100000 s (27.8 h), ..."
// Whether `ns` (a computed time, in double) lies in 0..kMaxComputedTimeNs; false for NaN.
bool computed_time_in_range(double ns);
std::string bytes_range_text();

// The value in ns or bytes; nullopt when it is NaN, infinite, negative or above the maximum.
std::optional<TimeNs> checked_ms_to_ns(double ms);
std::optional<Bytes> checked_bytes(double bytes);

// A byte count the model computed (a stage's weights, its optimizer state), rounded: an InputError naming
// `what` when it is NaN, negative or so large (above 2^62, 4.6 EB) that the run's sums could leave int64
// bytes, instead of a wrapped count that would print as 0 and "fits".
Bytes computed_bytes(double bytes, const char* what);

// a + b, or an InputError naming `what` when the sum leaves int64 nanoseconds.
TimeNs add_time_ns(TimeNs a, TimeNs b, const char* what);

}  // namespace pipesim
