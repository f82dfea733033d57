#pragma once
// The schedule interface. A schedule turns a pipeline shape into an ExecutionPlan: either static per-device
// action lists (StaticSchedule) or run-time rule policies. The engine never knows which schedule it runs.
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "base/name_table.h"
#include "schedules/guarantees.h"
#include "sim/comm_model.h"
#include "sim/cost_model.h"
#include "sim/policy.h"
#include "sim/steady_state.h"

namespace pipesim {

// barrier: every stage's U waits for all stages' gradients (the all-reduce for gradient clipping).
// post-validation: no barrier, so consecutive batches overlap.
// none: asynchronous schedules, whose stages step on their own and never flush.
enum class OptimizerSync { kBarrier, kPostValidation, kNone };
// The names results and scenarios use (base/name_table.h): barrier, post-validation, none.
const NameTable<OptimizerSync>& sync_names();

struct PipelineSpec {
  int devices = 1;       // N
  int microbatches = 1;  // m, per batch
  int batches = 4;       // batches simulated (the stream length of asynchronous schedules); at least the
                         // scenario's `batches`, extended to reach a steady state (sim/steady_state.h)
  OptimizerSync sync = OptimizerSync::kBarrier;
  // A fresh comm model like the engine's. Only cost-aware generators (zb-1p/2p) use it: to plan with each
  // boundary's latency and to simulate their candidates. Empty: no comm latency.
  std::function<std::unique_ptr<CommModel>()> make_comm;
  // The costs repeat exactly (no jitter): a generator that simulates its candidates (zb-1p/2p) measures them
  // to the same steady state as the run it reports, so it picks by the figures it reports.
  bool exact_costs = true;
  int total_microbatches() const { return microbatches * batches; }
};

using ActionList = std::vector<Action>;
using DeviceActionLists = std::vector<ActionList>;  // one list per device

// A device's list in the container a list builder was asked for (ActionList or ActionRuns).
template <typename List>
List list_as(ActionList&& actions) {
  if constexpr (std::is_same_v<List, ActionList>) {
    return std::move(actions);
  } else {
    return List(actions);
  }
}

class Schedule {
 public:
  virtual ~Schedule() = default;
  // Registered name plus parameters, e.g. "interleaved-1f1b(chunks=2)".
  virtual std::string label() const = 0;
  virtual PipelineLayout layout(int devices) const { return PipelineLayout::linear(devices); }
  // True when the schedule runs I and W instead of B (and so needs the costs of both).
  virtual bool splits_backward() const { return false; }
  // Whether its plans run a forward and another microbatch's backward in one slot (Action::fused_with_next),
  // where the cost model may hide one op's communication under the other's compute.
  virtual bool fuses_forward_backward() const { return false; }
  // True when the schedule orders its ops under an activation-memory limit, which counts the M_W that each
  // W frees (zb-1p, zb-2p): explicit costs must then state M_W.
  virtual bool plans_under_memory_limit() const { return false; }
  // The optimizer synchronisation the schedule is designed for when the scenario does not say.
  virtual OptimizerSync default_sync() const { return OptimizerSync::kBarrier; }
  // Throws InputError when the schedule cannot run this pipeline (e.g. chunks that do not divide m).
  virtual void check(const PipelineSpec& /*spec*/) const {}
  virtual ExecutionPlan plan(const PipelineSpec& spec, const CostModel& costs) const = 0;
  // How long its fill, repeating cycle and drain are. Default: one batch of warm-up (under a barrier batch 0
  // starts from idle devices, later ones from the optimizer step; post-validation overlaps batches), a cycle
  // of one batch, no drain that the window depends on.
  virtual SteadyStateHint steady_state(const PipelineSpec& spec) const {
    return {spec.microbatches, spec.microbatches, 0};
  }
  // Microbatches whose gradients one optimizer step applies (default: a batch, m; PipeDream 1, PACI a,
  // WPipe N): what a learning rate scaled with the step batch scales by.
  virtual int microbatches_per_step(const PipelineSpec& spec) const { return spec.microbatches; }
  // What the schedule promises about weight versions, per stage (default: synchronous, Δ = τ = 0, one copy).
  virtual WeightGuarantees guarantees(const PipelineSpec& spec) const {
    return WeightGuarantees(layout(spec.devices).stages);
  }
};

// A schedule given as per-device action lists for one batch; batches repeat it with an optimizer step per
// stage.
class StaticSchedule : public Schedule {
 public:
  // Microbatches 0..m-1 of one batch, per device, without U.
  virtual DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& costs) const = 0;
  // The same lists held as runs (sim/action_runs.h), what a plan keeps. By default batch_actions() taken in
  // runs; a schedule given by a formula builds the runs directly, so its plan never holds m actions.
  virtual std::vector<ActionRuns> batch_runs(const PipelineSpec& spec, const CostModel& costs) const;
  // Every batch with its microbatch offset, each followed on every device by one U per stage it holds.
  DeviceActionLists all_actions(const PipelineSpec& spec, const CostModel& costs) const;
  ExecutionPlan plan(const PipelineSpec& spec, const CostModel& costs) const override;
};

// A static schedule whose lists come from one builder that pushes into either container, so that its plan
// holds runs and never m actions. Derived defines
//   template <typename List> std::vector<List> build_lists(const PipelineSpec& spec) const;
template <typename Derived>
class ListBuilderSchedule : public StaticSchedule {
 public:
  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& /*costs*/) const final {
    return derived().template build_lists<ActionList>(spec);
  }
  std::vector<ActionRuns> batch_runs(const PipelineSpec& spec, const CostModel& /*costs*/) const final {
    return derived().template build_lists<ActionRuns>(spec);
  }

 private:
  const Derived& derived() const { return static_cast<const Derived&>(*this); }
};

// One batch's lists repeated over spec.batches with microbatch offsets, each batch followed on every device
// by one U per stage it holds (synchronized under barrier sync).
DeviceActionLists repeat_batches(const PipelineLayout& layout, const DeviceActionLists& one_batch,
                                 const PipelineSpec& spec);

// Wraps fixed per-device lists into an ExecutionPlan (used by static schedules and user CSV files).
ExecutionPlan plan_from_lists(const PipelineLayout& layout, DeviceActionLists lists, int total_microbatches);

}  // namespace pipesim
