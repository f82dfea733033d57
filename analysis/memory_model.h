#pragma once
// Memory per device over a simulated run (docs/design.md §5):
//   weights × live versions (stashes of PipeDream, 2BW's second copy: derived from the trace, never assumed)
//   + gradients + optimizer state + extra buffers (static: from the cost model, per stage)
//   + activations of the microbatches in flight (the engine's timeline: F adds M_B, I releases M_B − M_W,
//     W releases M_W, B releases M_B).
// Peak and timeline per device.
#include <vector>

#include "analysis/drift.h"
#include "sim/trace.h"

namespace pipesim {

// What a (virtual) stage holds besides activations: plain bytes per stage, whatever model they came from
// (api/simulation.h derives them from the transformer model or the explicit costs).
struct StageStaticMemory {
  Bytes weight_bytes = 0;  // one copy of the weights
  Bytes gradient_bytes = 0;
  Bytes optimizer_bytes = 0;  // optimizer state, with any fp32 master weights
  Bytes extra_bytes = 0;      // buffers a schedule or runtime needs besides these (full recomputation's)
};

struct MemoryPoint {
  TimeNs time_ns;
  Bytes total_bytes;
};

struct DeviceMemory {
  Bytes peak_bytes = 0;
  TimeNs peak_time_ns = 0;
  // The parts of the peak.
  Bytes peak_weight_bytes = 0;      // weights × live versions at the peak
  Bytes peak_activation_bytes = 0;  // activations at the peak
  Bytes fixed_bytes = 0;            // gradients + optimizer state + extra buffers (always held)
  Bytes gradient_bytes = 0;         // the parts of fixed_bytes
  Bytes optimizer_bytes = 0;
  Bytes buffer_bytes = 0;
  int weight_versions_max = 1;        // most versions of one of its stages held at once
  std::vector<MemoryPoint> timeline;  // one point per change
};

struct MemoryReport {
  std::vector<DeviceMemory> devices;
  Bytes peak_bytes() const;  // the largest device peak
};

// Adds one stage's static memory to its device's fixed parts.
void add_static_memory(DeviceMemory& device, const StageStaticMemory& stage);

// `per_stage` is indexed by the trace's (virtual) stages; a device sums the stages it holds.
MemoryReport compute_memory(const RunTrace& trace, const DriftReport& drift,
                            const std::vector<StageStaticMemory>& per_stage);

}  // namespace pipesim
