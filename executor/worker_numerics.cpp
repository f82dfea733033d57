#include "executor/worker_numerics.h"

#include <fmt/format.h>

#include <iterator>

#include "base/errors.h"
#include "executor/datasets.h"

namespace pipesim::executor {

// What stage s keeps of microbatch j between its ops.
struct WorkerNumerics::Slot {
  std::vector<UnitCache<float>> caches;
  WeightCopy forward_weights;   // what F read: the stash of a stashing schedule
  WeightCopy backward_weights;  // what I (or B) read, recorded again by W
  Matrix<float> output_gradient;
  bool forward_done = false;
  bool input_grad_done = false;
};

struct WorkerNumerics::StageState {
  std::map<int, std::shared_ptr<const std::vector<float>>> versions;  // newest last
  std::map<int, std::vector<float>> pending_gradients;                // by microbatch
  std::map<int, Slot> slots;                                          // by microbatch
  int in_flight = 0;
  Bytes live_bytes = 0;
  std::unique_ptr<StageUpdater> updater;
  int last_delay = 0;          // updates between the F and the B (or I) of the stage's latest backward
  int lowest_unforwarded = 0;  // no microbatch below it waits for its F
  // Versions no forward may read any more, some still held (a stash, the readout of the U that replaced
  // them): the next U writes into one nothing holds instead of a fresh allocation, whose pages a worker's
  // malloc arena may have returned (minor faults in U's copy, 0.3 -> 1.5 ms at width 256).
  std::vector<std::shared_ptr<const std::vector<float>>> retired;
  int buffers_made = 1;  // the initial weights' included
};

WorkerNumerics::WorkerNumerics(const StagedModel& model, const std::vector<int>& stages_held,
                               const ExecutionPlan& plan, const TrainingSetup& setup, Outbox outbox)
    : model_(model),
      setup_(setup),
      layout_(plan.layout),
      backward_reads_(plan.backward_reads),
      forward_reads_(plan.forward_reads),
      outbox_(std::move(outbox)) {
  for (int s : stages_held) {
    auto state = std::make_unique<StageState>();
    // Every copy of a piece of the model starts from the same weights (the model has one piece per stage of
    // a copy).
    const int piece = layout_.model_stage(s);
    // Made non-const (a recycled buffer is written through const_pointer_cast).
    state->versions[0] = std::make_shared<std::vector<float>>(model.initial_parameters[piece]);
    state->updater = std::make_unique<StageUpdater>(make_stage_updater(setup, model, piece));
    stages_held_[s] = std::move(state);
  }
}

WorkerNumerics::~WorkerNumerics() = default;

WorkerNumerics::StageState& WorkerNumerics::stage_state(int stage) {
  return *stages_held_.at(stage);
}
const WorkerNumerics::StageState& WorkerNumerics::stage_state(int stage) const {
  return *stages_held_.at(stage);
}
WorkerNumerics::Slot& WorkerNumerics::slot(int stage, int mb) {
  return stage_state(stage).slots[mb];
}
const WorkerNumerics::Slot* WorkerNumerics::find_slot(int stage, int mb) const {
  const auto& slots = stage_state(stage).slots;
  const auto found = slots.find(mb);
  return found == slots.end() ? nullptr : &found->second;
}

void WorkerNumerics::deliver(const TensorTag& tag, Matrix<float> tensor) {
  if (tag.kind == TensorKind::kWeightGradient) {
    stage_state(tag.stage).pending_gradients[tag.microbatch] = std::move(tensor.values);
    return;
  }
  inbox_[tag] = std::move(tensor);
}
bool WorkerNumerics::gradients_complete(int stage, int step) const {
  if (layout_.pipelines == 1) return true;
  const int m = setup_.microbatches_per_batch;
  const auto& pending = stage_state(stage).pending_gradients;
  return std::distance(pending.lower_bound(step * m), pending.lower_bound((step + 1) * m)) == m;
}
bool WorkerNumerics::has(const TensorTag& tag) const {
  return inbox_.contains(tag);
}
bool WorkerNumerics::forward_done(int stage, int mb) const {
  const Slot* st = find_slot(stage, mb);
  return st != nullptr && st->forward_done;
}
bool WorkerNumerics::input_grad_done(int stage, int mb) const {
  const Slot* st = find_slot(stage, mb);
  return st != nullptr && st->input_grad_done;
}
int WorkerNumerics::version(int stage) const {
  return stage_state(stage).versions.rbegin()->first;
}
int WorkerNumerics::in_flight(int stage) const {
  return stage_state(stage).in_flight;
}
Bytes WorkerNumerics::live_activation_bytes(int stage) const {
  return stage_state(stage).live_bytes;
}
Bytes WorkerNumerics::optimizer_state_bytes(int stage) const {
  return stage_state(stage).updater->state_bytes();
}
int WorkerNumerics::kept_weight_versions(int stage) const {
  return static_cast<int>(stage_state(stage).versions.size());
}

int WorkerNumerics::weight_buffers_made(int stage) const {
  return stage_state(stage).buffers_made;
}

std::int64_t WorkerNumerics::applied_microbatches(int stage) const {
  return stage_state(stage).updater->applied_microbatches();
}

int WorkerNumerics::optimizer_steps(int stage) const {
  return stage_state(stage).updater->steps();
}

int WorkerNumerics::pinned_weight_copies(int stage) const {
  int pinned = 0;
  for (const auto& [mb, st] : stage_state(stage).slots)
    pinned += (st.forward_weights.values != nullptr) + (st.backward_weights.values != nullptr);
  return pinned;
}
std::vector<float> WorkerNumerics::parameters(int stage) const {
  return *stage_state(stage).versions.rbegin()->second;
}

OpReadout WorkerNumerics::execute(const Action& a) {
  StageState& stage = stage_state(a.stage);
  if (a.kind == OpKind::U) {
    const auto& [version, values] = *stage.versions.rbegin();
    const OpReadout readout{version, values};
    step_optimizer(a.stage, a.microbatch);
    return readout;
  }
  Slot& st = slot(a.stage, a.microbatch);
  const Bytes before_bytes = static_cast<Bytes>(cache_bytes(st.caches));
  const WeightCopy read = weights_read(a, st);
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
  stage.live_bytes += static_cast<Bytes>(cache_bytes(st.caches)) - before_bytes;
  return {read.version, read.values};
}

std::uint64_t WorkerNumerics::weights_fingerprint(const OpReadout& readout) {
  const std::shared_ptr<const std::vector<float>>& values = readout.weights;
  const auto found = fingerprints_.find(values.get());
  if (found != fingerprints_.end() && found->second.copy.lock() == values) return found->second.fingerprint;
  if (fingerprints_.size() >= 64)
    std::erase_if(fingerprints_, [](const auto& e) { return e.second.copy.expired(); });
  const std::uint64_t hash = fingerprint(*values);
  fingerprints_[values.get()] = {values, hash};
  return hash;
}

// F reads the newest version, or the one its microbatch is pinned to (double buffering); a backward reads the
// stash when the schedule stashes, the live weights otherwise; W reads what its I read.
WorkerNumerics::WeightCopy WorkerNumerics::weights_read(const Action& a, const Slot& st) const {
  const auto& versions = stage_state(a.stage).versions;
  const WeightCopy newest{versions.rbegin()->first, versions.rbegin()->second};
  switch (a.kind) {
    case OpKind::F: {
      const int pinned = forward_reads_.version_of(a.microbatch, a.stage);
      if (pinned < 0) return predicted(a.stage, newest);
      const auto found = versions.find(pinned);
      if (found == versions.end()) {
        throw ScheduleError(fmt::format("{} needs weight version {}, which stage {} does not have",
                                        describe(a), pinned, a.stage + 1));
      }
      return predicted(a.stage, {found->first, found->second});
    }
    case OpKind::B:
    case OpKind::I:
      return backward_reads_ == BackwardReads::kStashedWeights ? st.forward_weights : newest;
    case OpKind::W:
      return st.backward_weights;
    case OpKind::U:
      break;
  }
  return newest;
}

void WorkerNumerics::run_forward(const Action& a, Slot& st, const WeightCopy& read) {
  const int m = setup_.microbatches_per_batch;
  Microbatch<float> data = training_microbatch(setup_, a.microbatch / m, a.microbatch % m);
  Matrix<float> input;
  if (layout_.is_first_stage(a.stage)) {
    input = std::move(data.inputs);
  } else {
    const auto found = inbox_.find({a.stage, a.microbatch, TensorKind::kActivation});
    if (found == inbox_.end()) {
      throw ScheduleError(fmt::format("{} ran before its input activation arrived", describe(a)));
    }
    input = std::move(found->second);
    inbox_.erase(found);
  }
  st.forward_weights = read;
  Matrix<float> out =
      model_.stages[layout_.model_stage(a.stage)].forward(*read.values, std::move(input), st.caches);
  st.forward_done = true;
  ++stage_state(a.stage).in_flight;
  if (layout_.is_last_stage(a.stage)) {
    losses_[a.microbatch] = softmax_cross_entropy(out, data.labels, st.output_gradient);
  } else {
    outbox_({a.stage + 1, a.microbatch, TensorKind::kActivation}, std::move(out));
  }
}

void WorkerNumerics::run_backward_input(const Action& a, Slot& st, const WeightCopy& read) {
  if (!st.forward_done) throw ScheduleError(fmt::format("{} ran before its forward", describe(a)));
  Matrix<float> dy = std::move(st.output_gradient);
  if (!layout_.is_last_stage(a.stage)) {
    const auto found = inbox_.find({a.stage, a.microbatch, TensorKind::kGradient});
    if (found == inbox_.end()) {
      throw ScheduleError(fmt::format("{} ran before its output gradient arrived", describe(a)));
    }
    dy = std::move(found->second);
    inbox_.erase(found);
  }
  st.backward_weights = read;
  stage_state(a.stage).last_delay =
      stage_state(a.stage).versions.rbegin()->first - st.forward_weights.version;
  Matrix<float> dx =
      model_.stages[layout_.model_stage(a.stage)].backward_input(*read.values, std::move(dy), st.caches);
  st.output_gradient = {};
  st.input_grad_done = true;
  --stage_state(a.stage).in_flight;
  if (!layout_.is_first_stage(a.stage))
    outbox_({a.stage - 1, a.microbatch, TensorKind::kGradient}, std::move(dx));
}

void WorkerNumerics::run_backward_weight(const Action& a, Slot& st) {
  if (!st.input_grad_done) throw ScheduleError(fmt::format("{} ran before its I", describe(a)));
  const int piece = layout_.model_stage(a.stage);
  std::vector<float>& grads = stage_state(a.stage).pending_gradients[a.microbatch];
  grads.assign(model_.stages[piece].parameter_count(), 0.0F);
  model_.stages[piece].backward_weight(st.caches, grads);
  // The all-reduce of the copies: every other copy of this piece gets the gradient too, and each applies
  // all m in microbatch order, so the copies stay bit-identical.
  for (int copy = 0; copy < layout_.pipelines; ++copy) {
    const int twin = copy * layout_.stages_per_pipeline() + piece;
    if (twin == a.stage) continue;
    Matrix<float> shared(1, static_cast<int>(grads.size()));
    shared.values = grads;
    outbox_({twin, a.microbatch, TensorKind::kWeightGradient}, std::move(shared));
  }
  st.caches.clear();
  // The slot outlives the microbatch (its done flags answer readiness queries); the weight copies it
  // pinned must not, or every version a backward read stays alive (12 MB a batch at N = 8, width 256).
  st.forward_weights = {};
  st.backward_weights = {};
}

// Weight prediction: a forward reads the weights it is expected to meet at its backward, tau updates on,
// with tau the delay the stage's latest backward saw. Other rules, or no delay seen yet: the weights as
// they are (a copy is made only when they change).
WorkerNumerics::WeightCopy WorkerNumerics::predicted(int stage, const WeightCopy& copy) const {
  const StageState& state = stage_state(stage);
  if (setup_.correction != DelayCorrection::kWeightPrediction || state.last_delay <= 0) return copy;
  return {copy.version, std::make_shared<const std::vector<float>>(
                            state.updater->predicted(*copy.values, state.last_delay))};
}

// Applies every gradient finished since the stage's last step, in microbatch order. Under copies of the model
// only those of the step's batch: another copy may already have sent the next batch's.
void WorkerNumerics::step_optimizer(int stage, int step) {
  StageState& state = stage_state(stage);
  const auto [version, values] = *state.versions.rbegin();
  auto& pending = state.pending_gradients;
  const auto end = layout_.pipelines == 1 ? pending.end()
                                          : pending.lower_bound((step + 1) * setup_.microbatches_per_batch);
  std::vector<const std::vector<float>*> in_order;
  for (auto it = pending.begin(); it != end; ++it) in_order.push_back(&it->second);
  std::shared_ptr<std::vector<float>> next;
  for (auto it = state.retired.begin(); it != state.retired.end();) {
    if (it->use_count() > 1) {
      ++it;
      continue;
    }
    if (!next) {                       // the first free one is reused, any other freed here
      fingerprints_.erase(it->get());  // its contents change
      next = std::const_pointer_cast<std::vector<float>>(*it);
    }
    it = state.retired.erase(it);
  }
  if (next) {
    *next = *values;  // same size: no allocation
  } else {
    next = std::make_shared<std::vector<float>>(*values);
    ++state.buffers_made;
  }
  state.updater->update(*next, in_order);
  pending.erase(pending.begin(), end);
  state.versions[version + 1] = std::move(next);
  // Stashes hold their own reference; only pinned forwards (double buffering) look old versions up, and
  // only those a forward yet to run pins must stay: kept any longer, every version lived to the end of the
  // run, and each U's new copy came from fresh pages (2BW's U took 4x its time at width 256).
  if (!forward_reads_.pins(stage)) {
    retire(state, state.versions.find(version));
  } else {
    int& mb = state.lowest_unforwarded;
    for (const Slot* next = find_slot(stage, mb); next && next->forward_done; next = find_slot(stage, mb))
      ++mb;
    const int needed = forward_reads_.version_of(mb, stage);
    while (state.versions.size() > 1 && state.versions.begin()->first < needed)
      retire(state, state.versions.begin());
  }
}

// Drops a version from those forwards may read; a later U reuses its buffer once nothing else holds it.
void WorkerNumerics::retire(StageState& state,
                            std::map<int, std::shared_ptr<const std::vector<float>>>::iterator version) {
  state.retired.push_back(std::move(version->second));
  state.versions.erase(version);
}

}  // namespace pipesim::executor
