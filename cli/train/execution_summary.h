#pragma once
// The JSON line `pipesim execute` prints for one executed run (train/execute.h).
#include <nlohmann/json.hpp>

#include "train/execute.h"

namespace pipesim {

// Per run: makespan, mean loss of the first and last batch, per-stage largest drift, per-device peak of live
// activation bytes, per-stage fingerprint of the final weights. Under the mpi transport only rank 0's run is
// whole (the others hold their own part).
nlohmann::json execution_summary(const ExecutedSchedule& run);

}  // namespace pipesim
