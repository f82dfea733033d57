#include "executor/replay_executor.h"

#include <fmt/format.h>

#include <map>
#include <memory>

#include "executor/teacher_data.h"
#include "sim/engine.h"
#include "sim/errors.h"

namespace pipesim::executor {
namespace {

// One version of one stage's weights, shared by the stashes and pinned forwards that still read it.
struct WeightCopy {
  int version = 0;
  std::shared_ptr<const std::vector<float>> values;
};

// What stage s keeps of microbatch j between its ops.
struct MicrobatchSlot {
  std::vector<UnitCache<float>> caches;
  WeightCopy forward_weights;     // what F read: the stash of a stashing schedule
  WeightCopy backward_weights;    // what I (or B) read, recorded again by W
  Matrix<float> input;            // activation from stage s-1 (or the data on stage 0)
  Matrix<float> output_gradient;  // from stage s+1 (or the loss on the last stage)
  bool has_input = false;
  bool has_output_gradient = false;
};

class ReplayRun {
 public:
  ReplayRun(const ExecutionPlan& plan, const TrainingSetup& setup)
      : plan_(plan), setup_(setup), model_(build_staged_model(setup, plan.layout.stages)) {
    const int stages = plan.layout.stages;
    versions_.resize(stages);
    pending_gradients_.resize(stages);
    for (int s = 0; s < stages; ++s) {
      versions_[s][0] = std::make_shared<const std::vector<float>>(model_.initial_parameters[s]);
    }
    device_bytes_.assign(plan.layout.devices, 0);
    result_.losses.assign(plan.total_microbatches, 0.0);
  }

  ExecutionResult run(RunTrace trace) {
    for (const OpRecord& op : trace.ops) {
      ExecutedOp done{op.action, op.device, 0, 0, op.start_ns, op.end_ns, 0};
      execute(op.action, done);
      done.live_activation_bytes = device_bytes_[op.device];
      result_.ops.push_back(done);
    }
    for (int s = 0; s < plan_.layout.stages; ++s) result_.final_parameters.push_back(*current(s).values);
    result_.trace = std::move(trace);
    return std::move(result_);
  }

 private:
  WeightCopy current(int stage) const {
    const auto& [version, values] = *versions_[stage].rbegin();
    return {version, values};
  }

  WeightCopy version_of(int stage, int version) const {
    const auto found = versions_[stage].find(version);
    if (found == versions_[stage].end()) {
      throw ScheduleError(fmt::format("stage {} has no weight version {}", stage + 1, version));
    }
    return {found->first, found->second};
  }

  MicrobatchSlot& slot(int stage, int mb) { return slots_[{stage, mb}]; }

  void execute(const Action& a, ExecutedOp& done) {
    if (a.kind == OpKind::U) {
      const WeightCopy before = current(a.stage);
      done.weight_version = before.version;
      done.weights_fingerprint = fingerprint(*before.values);
      step_optimizer(a.stage, before);
      return;
    }
    MicrobatchSlot& st = slot(a.stage, a.microbatch);
    const Bytes before_bytes = static_cast<Bytes>(cache_bytes(st.caches));
    const WeightCopy read = weights_read(a, st);
    done.weight_version = read.version;
    done.weights_fingerprint = fingerprint(*read.values);
    switch (a.kind) {
      case OpKind::F:
        run_forward(a, st, read);
        break;
      case OpKind::B:
      case OpKind::I:
        run_backward_input(a, st, read);
        if (a.kind == OpKind::B) run_backward_weight(a, st);
        break;
      case OpKind::W:
        run_backward_weight(a, st);
        break;
      case OpKind::U:
        break;
    }
    device_bytes_[plan_.layout.device(a.stage)] += static_cast<Bytes>(cache_bytes(st.caches)) - before_bytes;
  }

  // F reads the newest version, or the one its microbatch is pinned to (double buffering); a backward reads
  // the stash when the schedule stashes, the live weights otherwise; W reads what its I read.
  WeightCopy weights_read(const Action& a, const MicrobatchSlot& st) const {
    switch (a.kind) {
      case OpKind::F: {
        const int pinned = plan_.forward_reads.version_of(a.microbatch);
        return pinned >= 0 ? version_of(a.stage, pinned) : current(a.stage);
      }
      case OpKind::B:
      case OpKind::I:
        return plan_.backward_reads == BackwardReads::kStashedWeights ? st.forward_weights : current(a.stage);
      case OpKind::W:
        return st.backward_weights;
      case OpKind::U:
        break;
    }
    return current(a.stage);
  }

  void run_forward(const Action& a, MicrobatchSlot& st, const WeightCopy& read) {
    const int m = setup_.microbatches_per_batch;
    Microbatch<float> data = teacher_microbatch<float>(setup_.seed, a.microbatch / m, a.microbatch % m,
                                                       setup_.samples_per_microbatch,
                                                       setup_.shape.input_width, setup_.shape.classes);
    if (a.stage == 0) {
      st.input = std::move(data.inputs);
    } else if (!st.has_input) {
      throw ScheduleError(fmt::format("{} ran before its input activation arrived", describe(a)));
    }
    st.forward_weights = read;
    Matrix<float> out = model_.stages[a.stage].forward(*read.values, std::move(st.input), st.caches);
    st.input = {};
    st.has_input = false;
    if (a.stage + 1 == plan_.layout.stages) {
      result_.losses[a.microbatch] = softmax_cross_entropy(out, data.labels, st.output_gradient);
      st.has_output_gradient = true;
    } else {
      MicrobatchSlot& next = slot(a.stage + 1, a.microbatch);
      next.input = std::move(out);
      next.has_input = true;
    }
  }

  void run_backward_input(const Action& a, MicrobatchSlot& st, const WeightCopy& read) {
    if (!st.has_output_gradient || st.caches.empty()) {
      throw ScheduleError(fmt::format("{} ran before its forward or its output gradient", describe(a)));
    }
    st.backward_weights = read;
    Matrix<float> dx =
        model_.stages[a.stage].backward_input(*read.values, std::move(st.output_gradient), st.caches);
    st.output_gradient = {};
    st.has_output_gradient = false;
    if (a.stage > 0) {
      MicrobatchSlot& previous = slot(a.stage - 1, a.microbatch);
      previous.output_gradient = std::move(dx);
      previous.has_output_gradient = true;
    }
  }

  void run_backward_weight(const Action& a, MicrobatchSlot& st) {
    std::vector<float>& grads = pending_gradients_[a.stage][a.microbatch];
    grads.assign(model_.stages[a.stage].parameter_count(), 0.0F);
    model_.stages[a.stage].backward_weight(st.caches, grads);
    st.caches.clear();
    st.forward_weights = {};
  }

  // Applies every gradient finished since the stage's last step, in microbatch order.
  void step_optimizer(int stage, const WeightCopy& before) {
    std::vector<const std::vector<float>*> in_order;
    for (const auto& [mb, grads] : pending_gradients_[stage]) in_order.push_back(&grads);
    auto next = std::make_shared<std::vector<float>>(*before.values);
    sgd_step(*next, in_order, setup_.learning_rate);
    pending_gradients_[stage].clear();
    versions_[stage][before.version + 1] = std::move(next);
    // Older copies stay alive only where a stash or a pinned forward still needs them.
    if (plan_.forward_reads.period_microbatches == 0) versions_[stage].erase(before.version);
  }

  const ExecutionPlan& plan_;
  const TrainingSetup& setup_;
  StagedModel model_;
  std::vector<std::map<int, std::shared_ptr<const std::vector<float>>>> versions_;  // per stage
  std::vector<std::map<int, std::vector<float>>> pending_gradients_;  // per stage, by microbatch
  std::map<std::pair<int, int>, MicrobatchSlot> slots_;               // by (stage, microbatch)
  std::vector<Bytes> device_bytes_;
  ExecutionResult result_;
};

}  // namespace

ExecutionResult execute_replay(ExecutionPlan& plan, const CostModel& costs, CommModel& comm,
                               const TrainingSetup& setup) {
  use_single_blas_thread();
  RunTrace trace = simulate(plan, costs, comm);
  ReplayRun run(plan, setup);
  return run.run(std::move(trace));
}

}  // namespace pipesim::executor
