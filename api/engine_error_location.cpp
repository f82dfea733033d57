#include "api/engine_error_location.h"

#include <fmt/format.h>

namespace pipesim {

std::string located_engine_error(const std::string& where, const std::string& label,
                                 int microbatches_per_batch, const std::string& message) {
  // The engine counts stages from 1 and microbatches across the run's batches (docs/design.md §3); a CSV
  // schedule counts both from 0 within one batch.
  return fmt::format(
      "{}: {}: {} (the engine counts stages from 1 and microbatches across batches: its stage s, mb k is "
      "0-based stage s-1, microbatch k mod {} of batch k / {})",
      where, label, message, microbatches_per_batch, microbatches_per_batch);
}

}  // namespace pipesim
