#pragma once
// Op times from a real run for the transformer model (`pipesim plan --trace-costs`): per op kind, the traced
// run's mean times (import/pytorch_trace.h) summed over its stages, over what the scenario's model predicts
// for the same stages. The scenario must describe the traced run (model, microbatch size, parallelism); the
// factors then scale every configuration the plan tries, so its ranking starts from the machine's real op
// times rather than the profile's alone. Transfers and optimizer steps are not in such a trace and stay as
// predicted.
#include <string>

#include "import/pytorch_trace.h"
#include "io/scenario.h"
#include "spec/hardware_profile.h"

namespace pipesim {

// Throws InputError when the scenario has no transformer model, the trace has no forward, or the model cannot
// split over the trace's stages. A stage's traced B (a whole backward) scales I and W alike.
OpTimeScale op_time_scale_from_trace(const Scenario& scenario, const TracedActions& traced,
                                     const std::string& trace_names);

}  // namespace pipesim
