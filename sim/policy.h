#pragma once
// A device policy decides what its device runs next. It sees only local state it could observe in a
// real run (which ops are ready, its stages' weight versions and in-flight counts), never the clock.
// Static lists and run-time rules (PACI's flow control, async 1F1B) both implement it.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/action.h"
#include "sim/action_runs.h"
#include "sim/layout.h"
#include "sim/transfer_gates.h"

namespace pipesim {

// What a policy may ask the engine about its own device's stages.
class LocalView {
 public:
  virtual ~LocalView() = default;
  // True when every dependency of the action is satisfied now (inputs arrived, barrier reached).
  virtual bool is_ready(const Action& action) const = 0;
  // Optimizer steps this stage has applied so far.
  virtual int weight_version(int stage) const = 0;
  // Microbatches whose F started on this stage and whose B (or I) has not yet finished.
  virtual int in_flight(int stage) const = 0;
};

class DevicePolicy {
 public:
  virtual ~DevicePolicy() = default;
  // The action this device wants next. A static list returns its next entry even when it is not ready
  // (the device then waits for exactly that op); a rule returns a ready action, or nullopt to wait.
  virtual std::optional<Action> next(const LocalView& view) = 0;
  // The engine started the action that next() returned.
  virtual void started(const Action& action) = 0;
  // No more actions will come.
  virtual bool finished() const = 0;
  // The action after the one next() returned, when that one is fused with it (Action::fused_with_next):
  // the engine starts the pair only when both are ready. Only static lists fuse.
  virtual std::optional<Action> after_next() const { return std::nullopt; }
};

// Which weights a backward reads: the live ones, or the version its forward used (weight stashing).
enum class BackwardReads { kCurrentWeights, kStashedWeights };

// Which version a forward reads: by default the newest. Double buffering (PipeDream-2BW) instead moves every
// stage to a new version at the same microbatch boundaries, so that a microbatch sees one model on all
// stages: microbatch j reads version max(j / period - lag, 0), kept as a shadow copy once a newer one exists,
// and its forward waits until the stage has made that version. The lag may differ by stage (WPipe: one
// version behind on the first half of the model, none on the second); a negative lag leaves a stage on the
// newest version (a study's delay mask delays some stages of a synchronous schedule only).
struct ForwardReads {
  int period_microbatches = 0;  // 0: the newest version
  int lag_versions = 0;
  std::vector<int> lag_of_stage;  // per (virtual) stage, when not empty; else lag_versions everywhere
  int lag(int stage) const { return lag_of_stage.empty() ? lag_versions : lag_of_stage[stage]; }
  // Whether the stage's forwards are pinned to versions (else they read the newest).
  bool pins(int stage) const { return period_microbatches > 0 && lag(stage) >= 0; }
  // The version microbatch j reads on a stage, or -1 for the newest.
  int version_of(int microbatch, int stage) const {
    return pins(stage) ? std::max(microbatch / period_microbatches - lag(stage), 0) : -1;
  }
};

// A static schedule's plan as data: one batch's lists per device, each run `batches` times and followed by
// one optimizer step per stage the device holds (what schedules/repeating_list_policy.h runs). Lets a run be
// timed without the event loop where that is exact (sim/fast/repeated_list_stream.h).
struct RepeatedBatchLists {
  std::vector<ActionRuns> one_batch;  // per device: microbatches 0..m-1, no U
  int batches = 1;
  int microbatches_per_batch = 1;
  bool synchronized_steps = false;  // each step is a barrier over all devices
};

// Everything the engine needs from a schedule to run it.
struct ExecutionPlan {
  PipelineLayout layout;
  std::vector<std::unique_ptr<DevicePolicy>> policies;  // one per device
  BackwardReads backward_reads = BackwardReads::kCurrentWeights;
  ForwardReads forward_reads;
  int total_microbatches = 0;  // microbatch indices are 0..total_microbatches-1
  // Where transfers are posted (sim/transfer_gates.h), repeating every transfer_gate_period microbatches;
  // honoured only by blocking comm.
  std::vector<TransferGate> transfer_gates;
  int transfer_gate_period = 0;
  // Set when the policies run exactly these lists (static schedules): shared with them, not a copy.
  std::shared_ptr<const RepeatedBatchLists> repeated;
};

}  // namespace pipesim
