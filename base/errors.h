#pragma once
// Every user-facing failure is one of these; the CLI prints what() on one line and exits non-zero.
#include <stdexcept>
#include <string>

namespace pipesim {

// Bad input: a scenario, a parameter, a CSV cell. The message names the input and what was expected.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A run refused before it starts because its estimate exceeds a ceiling (sim/resource_estimate.h): bad input
// too, but never a grid point a schedule "does not allow" (pipesim check reports it instead of skipping it).
class ResourceLimitError : public InputError {
 public:
  using InputError::InputError;
};

// A command line the tool it describes would refuse before it started (an argument Megatron's argparse does
// not know, close to one it does): exit 2, as a usage error.
class UsageError : public InputError {
 public:
  using InputError::InputError;
};

// The simulated schedule cannot progress: the message names each blocked device and what it waits for.
class DeadlockError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A schedule broke one of the engine's rules (an op on the wrong device, an op run twice, ...).
class ScheduleError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A figure that breaks physics or a schedule's own bound (sim/steady_state.h, api/run_assertions.h): a bug in
// pipesim, never a result. The message names the run.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace pipesim
