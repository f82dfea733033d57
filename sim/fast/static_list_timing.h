#pragma once
// The start and end of every op of fixed per-device lists, in one dependency-ordered pass instead of the
// event loop: where each op starts at the latest of its device's previous end, its inputs' arrivals and its
// barrier, max-plus arithmetic gives exactly the engine's times. That holds for static lists under the
// fixed-latency comm model with forwards reading the newest version; anything else (double buffering, link
// queues, blocking transfers, zero-length F, B, I or W whose memory changes' order at one instant matters,
// lists that deadlock or break a rule) returns nullopt and the caller runs the engine, which also gives the
// error.
#include <optional>
#include <vector>

#include "sim/cost_model.h"
#include "sim/layout.h"
#include "sim/policy.h"
#include "sim/trace.h"

namespace pipesim {

struct StaticListRun {
  const PipelineLayout& layout;
  const std::vector<std::vector<Action>>& lists;  // per device, in run order
  int total_microbatches = 0;
  BackwardReads backward_reads = BackwardReads::kCurrentWeights;
  std::vector<TimeNs> latency_ns;  // per sending device (FixedLatencyComm)
};

// A trace with ops (sorted by start time, then device, then list order; the engine may order one instant's
// ops otherwise), their weight versions, the makespan and every
// device's activation and in-flight peaks; no transfers, memory timeline or critical path.
std::optional<RunTrace> time_static_lists(const StaticListRun& run, const CostModel& costs);

}  // namespace pipesim
