#include "plan/plan_bounds.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace pipesim {
namespace {

// Microbatches of one batch (0..m-1) that pass through the stage.
int visiting_microbatches(const PipelineLayout& layout, int stage, int microbatches) {
  int count = 0;
  for (int mb = 0; mb < std::min(microbatches, layout.pipelines); ++mb) {
    if (layout.visits(stage, mb)) count += (microbatches - mb + layout.pipelines - 1) / layout.pipelines;
  }
  return count;
}

}  // namespace

CandidateBounds candidate_bounds(const ResolvedRun& run) {
  const PipelineLayout& layout = run.layout;
  const CostModel& costs = *run.costs;
  const int m = run.spec.microbatches;
  CandidateBounds bounds;
  bounds.synchronous = run.spec.sync != OptimizerSync::kNone;
  const int steps_per_batch =
      bounds.synchronous ? 1 : m / std::max(1, run.schedule->microbatches_per_step(run.spec));
  const bool split = run.schedule->splits_backward();
  // A fused slot may hide an op's communication under the other's compute: count only what it cannot hide.
  const bool fuses = run.schedule->fuses_forward_backward();
  const auto work = [&](const Action& a) {
    return static_cast<double>(costs.duration(a)) - (fuses ? static_cast<double>(costs.hideable_ns(a)) : 0.0);
  };
  // The steps as the run asks for them (a barrier's may hide part of the gradient reduction).
  const bool barrier = run.spec.sync == OptimizerSync::kBarrier;
  std::vector<double> work_ns(layout.devices, 0);
  std::vector<double> static_bytes(layout.devices, 0);
  std::vector<double> largest_activation(layout.devices, 0);
  for (int stage = 0; stage < layout.stages; ++stage) {
    const int device = layout.device(stage);
    // A splitting schedule may still run some backwards whole (DualPipe does): I + W and B differ by the
    // rounding of each to whole ns, and the smaller keeps the bound a lower bound.
    const double whole = work(pipesim::backward(stage, 0));
    const double backward =
        split ? std::min(whole, work(backward_input(stage, 0)) + work(backward_weight(stage, 0))) : whole;
    const double per_microbatch = work(forward(stage, 0)) + backward;
    work_ns[device] +=
        per_microbatch * visiting_microbatches(layout, stage, m) +
        static_cast<double>(costs.duration(optimizer_step(stage, 0, barrier))) * steps_per_batch;
    if (stage < static_cast<int>(run.static_memory.size())) {
      const StageStaticMemory& s = run.static_memory[stage];
      static_bytes[device] +=
          static_cast<double>(s.weight_bytes + s.gradient_bytes + s.optimizer_bytes + s.extra_bytes);
    }
    largest_activation[device] =
        std::max(largest_activation[device], static_cast<double>(costs.activation_bytes(stage)));
  }
  for (int device = 0; device < layout.devices; ++device) {
    bounds.busiest_work_s = std::max(bounds.busiest_work_s, work_ns[device] * 1e-9);
    bounds.min_peak_bytes =
        std::max(bounds.min_peak_bytes, static_bytes[device] + largest_activation[device]);
  }
  return bounds;
}

std::string simulation_fingerprint(const ResolvedRun& run) {
  const PipelineLayout& layout = run.layout;
  const CostModel& costs = *run.costs;
  std::string key = fmt::format("{}|N={}|m={}|sync={}|", run.schedule->label(), run.spec.devices,
                                run.spec.microbatches, static_cast<int>(run.spec.sync));
  for (int stage = 0; stage < layout.stages; ++stage) {
    key += fmt::format("{},{};", costs.duration(optimizer_step(stage, 0, true)),
                       costs.before_barrier_ns(optimizer_step(stage, 0, true)));
    key += fmt::format("{},{},{},{},{},{},{},{};", costs.duration(forward(stage, 0)),
                       costs.duration(backward(stage, 0)), costs.duration(backward_input(stage, 0)),
                       costs.duration(backward_weight(stage, 0)),
                       costs.duration(optimizer_step(stage, 0, false)), costs.activation_bytes(stage),
                       costs.weight_grad_activation_bytes(stage), costs.transfer_bytes(stage));
    if (stage < static_cast<int>(run.static_memory.size())) {
      const StageStaticMemory& s = run.static_memory[stage];
      key += fmt::format("{},{},{},{};", s.weight_bytes, s.gradient_bytes, s.optimizer_bytes, s.extra_bytes);
    }
    // The message's timing to either neighbour device, on a fresh link.
    const int device = layout.device(stage);
    for (int other : {(device + 1) % layout.devices, (device + layout.devices - 1) % layout.devices}) {
      const TransferTiming timing = run.make_comm()->send(device, other, costs.transfer_bytes(stage), 0);
      key += fmt::format("{},{};", timing.start_ns, timing.arrival_ns);
    }
  }
  key += fmt::format("cap={}|blocking={}", run.memory_capacity_bytes, run.make_comm()->blocks_streams());
  return key;
}

}  // namespace pipesim
