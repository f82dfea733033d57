#pragma once
// What the engine reports while a run goes, in the order it happens (time, then the engine's deterministic
// order within an instant). A trace keeps all of it; streaming analyses (analysis/streaming_analysis.h)
// keep only what their figures need, so a run without a trace holds no per-op record.
#include "sim/trace.h"

namespace pipesim {

// The last gradient op of one (stage, microbatch) started: its drift and, once a step applies it, its
// staleness are final.
struct GradientRecord {
  std::int32_t stage;
  std::int32_t microbatch;
  std::int32_t forward_version;   // the version its F read
  std::int32_t gradient_version;  // the largest version its B (or I and W) read
  TimeNs gradient_end_ns;         // the end of its last gradient op
};

class RunObserver {
 public:
  virtual ~RunObserver() = default;
  // An op started (its end is already known: costs are fixed at the start). In start order.
  virtual void op_started(const OpRecord& op) = 0;
  virtual void transfer_sent(const TransferRecord& /*transfer*/) {}
  // A device's activation memory or in-flight count changed at sample.time_ns, the engine's present.
  virtual void memory_changed(int /*device*/, const MemorySample& /*sample*/) {}
  virtual void gradient_complete(const GradientRecord& /*gradient*/) {}
  // Version `version` of `stage` stopped being held at dead_ns (>= the engine's present): it has been
  // replaced and no op will read it again. The newest version of each stage is never retired.
  virtual void version_retired(int /*stage*/, int /*version*/, TimeNs /*dead_ns*/) {}
  // The run ended at makespan_ns; nothing more comes.
  virtual void run_finished(TimeNs /*makespan_ns*/) {}
};

}  // namespace pipesim
