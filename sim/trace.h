#pragma once
// What a run leaves behind: every executed op and transfer, and each device's memory timeline.
#include <cstdint>
#include <vector>

#include "base/units.h"
#include "sim/action.h"
#include "sim/layout.h"

namespace pipesim {

struct OpRecord {
  Action action;
  std::int32_t device;
  std::int32_t weight_version;  // the version of the stage's weights this op read (U: version before it)
  TimeNs start_ns;
  TimeNs end_ns;
  TimeNs duration_ns() const { return end_ns - start_ns; }
};

struct TransferRecord {
  OpKind producer;  // F sends activations forward; B/I send gradients backward
  std::int32_t src_stage;
  std::int32_t dst_stage;
  std::int32_t microbatch;
  std::int32_t src_device;
  std::int32_t dst_device;
  Bytes bytes;
  TimeNs send_ns;     // the producing op ended
  TimeNs start_ns;    // moving (blocking: the receiver's stream was free)
  TimeNs arrival_ns;  // usable by the receiver
  // A blocking transfer held the sender's compute stream over [send_ns, arrival_ns] and the receiver's over
  // [start_ns, arrival_ns]. That time is no compute: metrics count it as idle, hence as bubble.
  bool blocking = false;
};

// One change of a device's activation memory.
struct MemorySample {
  TimeNs time_ns;
  Bytes activation_bytes;
  std::int32_t in_flight;  // microbatches held over all of the device's stages
};

struct RunTrace {
  PipelineLayout layout;
  int total_microbatches = 0;
  std::vector<OpRecord> ops;  // in start order (time, then device)
  std::vector<TransferRecord> transfers;
  std::vector<std::vector<MemorySample>> memory;  // per device
  std::vector<Bytes> peak_activation_bytes;       // per device
  std::vector<int> peak_in_flight;                // per device
  std::vector<int> stage_peak_in_flight;          // per (virtual) stage
  long op_count = 0;                              // ops run when they were streamed, not recorded (else 0)
  // The most microbatches the engine held per-stage state for at once (sim/engine/microbatch_window.h): the
  // schedule's in-flight depth, which bounds the engine's memory without a trace.
  int microbatches_held_max = 0;
  long ops_run() const { return op_count + static_cast<long>(ops.size()); }
  TimeNs makespan_ns = 0;
  // The longest path through the realized task graph (analysis/task_graph.h), tracked as ops started:
  // its length and its ops (indices into `ops`, first to last).
  TimeNs critical_path_ns = 0;
  std::vector<std::size_t> critical_path;
  // Per device and synchronized step: the work its steps ran before the step's barrier, after its last op
  // (CostModel::before_barrier_ns; empty or 0 where there was none). Recorded with the ops.
  std::vector<std::vector<TimeNs>> before_barrier_ns;
  TimeNs before_barrier(int device, int step) const {
    if (device < 0 || device >= static_cast<int>(before_barrier_ns.size())) return 0;
    const auto& steps = before_barrier_ns[device];
    return step >= 0 && step < static_cast<int>(steps.size()) ? steps[step] : 0;
  }
};

}  // namespace pipesim
