#pragma once
// The numerics of one worker: its stages' weight versions (live copy, stashes, pinned double-buffer
// versions), each microbatch's saved activations and pending gradients, and the ops F, B, I, W and U on
// real tensors. Replay mode runs one over all stages; real mode one per device thread. Outputs leave through
// an outbox (a Transport in real mode), inputs come in through deliver().
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "base/units.h"
#include "executor/training_setup.h"
#include "sim/layout.h"
#include "sim/policy.h"

namespace pipesim::executor {

// kWeightGradient: one microbatch's weight gradient of a stage, sent to the other copies of its piece of the
// model (layouts with copies, PipelineLayout::pipelines > 1) for their all-reduce before the step.
enum class TensorKind : std::uint8_t { kActivation, kGradient, kWeightGradient };

// Names one tensor in flight: the stage that receives it, its microbatch and what it is.
struct TensorTag {
  int stage = 0;
  int microbatch = 0;
  TensorKind kind = TensorKind::kActivation;
  friend auto operator<=>(const TensorTag&, const TensorTag&) = default;
};

// What an op read and left, as the executor records it.
struct OpReadout {
  int weight_version = 0;  // of the weights the op read (U: the version before it)
  // Those weights (W reads none and records its I's copy); fingerprinted by weights_fingerprint() after the
  // op's timed work, so that hashing a new version never lands inside an op's time.
  std::shared_ptr<const std::vector<float>> weights;
};

class WorkerNumerics {
 public:
  using Outbox = std::function<void(const TensorTag&, Matrix<float>)>;
  WorkerNumerics(const StagedModel& model, const std::vector<int>& stages_held, const ExecutionPlan& plan,
                 const TrainingSetup& setup, Outbox outbox);
  ~WorkerNumerics();
  WorkerNumerics(const WorkerNumerics&) = delete;
  WorkerNumerics& operator=(const WorkerNumerics&) = delete;

  void deliver(const TensorTag& tag, Matrix<float> tensor);
  // Runs the op. Throws ScheduleError when an input or a weight version is missing.
  OpReadout execute(const Action& a);
  // The fingerprint of the weights an op read, hashed once per copy: copies never change after they are
  // made, and hashing megabytes of weights on every op would cost more than the op's arithmetic.
  std::uint64_t weights_fingerprint(const OpReadout& readout);

  // Local state, for the ready rules (docs/design.md §2) and the policies' LocalView.
  bool has(const TensorTag& tag) const;
  bool forward_done(int stage, int mb) const;
  bool input_grad_done(int stage, int mb) const;
  int version(int stage) const;
  // Under copies of the model: whether the stage holds the weight gradients of all m microbatches of
  // `step`, its own and its copies' (their all-reduce done). Always true with one copy.
  bool gradients_complete(int stage, int step) const;
  int in_flight(int stage) const;
  Bytes live_activation_bytes(int stage) const;  // saved tensors of the stage's microbatches
  Bytes optimizer_state_bytes(int stage) const;  // optimizer state and the delay correction's buffer
  // Weight copies the stage's microbatches still pin (a stash, what a backward read): 0 once every
  // microbatch that ran has finished its W, or old versions stay alive.
  int pinned_weight_copies(int stage) const;
  // Weight versions the stage keeps for forwards to read: the newest, plus (double buffering) the older ones
  // a forward yet to run is pinned to.
  int kept_weight_versions(int stage) const;
  // Weight buffers the stage allocated so far: a U reuses a retired version's buffer when nothing holds it.
  int weight_buffers_made(int stage) const;
  // Microbatch gradients the stage's optimizer has applied (StageUpdater::applied_microbatches).
  std::int64_t applied_microbatches(int stage) const;
  int optimizer_steps(int stage) const;

  std::vector<float> parameters(int stage) const;
  const std::map<int, double>& losses() const { return losses_; }

 private:
  struct WeightCopy {
    int version = 0;
    std::shared_ptr<const std::vector<float>> values;
  };
  struct Slot;
  struct StageState;

  StageState& stage_state(int stage);
  const StageState& stage_state(int stage) const;
  Slot& slot(int stage, int mb);
  const Slot* find_slot(int stage, int mb) const;
  WeightCopy weights_read(const Action& a, const Slot& st) const;
  WeightCopy predicted(int stage, const WeightCopy& copy) const;
  void run_forward(const Action& a, Slot& st, const WeightCopy& read);
  void run_backward_input(const Action& a, Slot& st, const WeightCopy& read);
  void run_backward_weight(const Action& a, Slot& st);
  void step_optimizer(int stage, int step);
  void retire(StageState& state, std::map<int, std::shared_ptr<const std::vector<float>>>::iterator version);

  const StagedModel& model_;
  const TrainingSetup& setup_;
  PipelineLayout layout_;
  BackwardReads backward_reads_;
  ForwardReads forward_reads_;
  Outbox outbox_;
  std::map<int, std::unique_ptr<StageState>> stages_held_;
  std::map<TensorTag, Matrix<float>> inbox_;
  std::map<int, double> losses_;
  struct HashedCopy {
    std::weak_ptr<const std::vector<float>> copy;  // expired: the address may now hold another copy
    std::uint64_t fingerprint = 0;
  };
  std::map<const std::vector<float>*, HashedCopy> fingerprints_;
};

}  // namespace pipesim::executor
