#pragma once
// What an executor run leaves: every op as it ran (version read, times, live activations) and the weights.
#include <cstdint>
#include <vector>

#include "base/units.h"
#include "sim/action.h"
#include "sim/trace.h"

namespace pipesim::executor {

struct ExecutedOp {
  Action action;
  int device = 0;
  int weight_version = 0;                 // of the weights the op read (U: the version before it)
  std::uint64_t weights_fingerprint = 0;  // of those weights; W reads none and records the I's copy
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  Bytes live_activation_bytes = 0;  // on the op's device, after the op
  TimeNs thread_cpu_ns = 0;         // CPU time of the worker thread over the op (both modes)
  // Real mode: the executor's own time for this op, outside the numerics and not waiting: choosing it
  // (the policy, readiness), taking in what arrived before it and handing its outputs to the transport.
  // Sending happens inside [start_ns, end_ns]; it is counted here, not as the op's work. Replay: 0.
  TimeNs overhead_ns = 0;
};

struct ExecutionResult {
  RunTrace trace;            // replay: the simulator's run that gave the order and times; real mode: empty
  bool timing_valid = true;  // real mode: false when there were more workers than cores (not pinned)
  std::vector<ExecutedOp> ops;
  std::vector<std::vector<float>> final_parameters;  // per (virtual) stage
  std::vector<double> losses;                        // per global microbatch
  std::vector<Bytes> optimizer_state_bytes;  // per (virtual) stage: optimizer state + correction buffer
};

}  // namespace pipesim::executor
