#pragma once
// Engine errors (a deadlock, an op run twice) located for the user: the schedule entry's file, line and key,
// the schedule's label (a CSV schedule's label names its file), and the engine's numbering translated into
// the 0-based (stage, microbatch) of a batch that a PyTorch CSV uses.
#include <string>
#include <utility>

#include "base/errors.h"

namespace pipesim {

// "{where}: {label}: {message} ({numbering note})", the note saying how to read the engine's stage and
// microbatch numbers.
std::string located_engine_error(const std::string& where, const std::string& label,
                                 int microbatches_per_batch, const std::string& message);

// Runs `run` (the run requested at `where`), rethrowing DeadlockError and ScheduleError (same type) with
// located_engine_error's text.
template <typename Run>
auto with_engine_errors_located(const std::string& where, const std::string& label,
                                int microbatches_per_batch, Run&& run) {
  try {
    return std::forward<Run>(run)();
  } catch (const DeadlockError& e) {
    throw DeadlockError(located_engine_error(where, label, microbatches_per_batch, e.what()));
  } catch (const ScheduleError& e) {
    throw ScheduleError(located_engine_error(where, label, microbatches_per_batch, e.what()));
  }
}

}  // namespace pipesim
