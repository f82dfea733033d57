#pragma once
// The exit codes every pipesim command shares (README, "Exit codes").
namespace pipesim {

inline constexpr int kExitSuccess = 0;
inline constexpr int kExitError = 1;        // bad input, a file that cannot be read or written, a failed run
inline constexpr int kExitUsage = 2;        // the command line cannot be parsed
inline constexpr int kExitNothingRan = 3;   // every requested schedule was skipped
inline constexpr int kExitCheckFailed = 4;  // `check`: an invariant broke; `validate`: MAPE over --max-mape
// `validate`: the measurement cannot be trusted (op threads preempted beyond --max-preempted)
inline constexpr int kExitUntrustedTiming = 5;

}  // namespace pipesim
