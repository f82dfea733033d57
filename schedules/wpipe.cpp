// WPipe (Yang et al., "Group-based Interleaved Pipeline Parallelism for Large-scale DNN Training", ICLR 2022;
// order and update rule as the authors' code runs them). The model is cut into 2N pieces placed as a loop of
// two chunks: device d holds piece d (group G0, the first half of the layers) and piece d + N (G1, the second
// half). Each group takes one optimizer step per block of N microbatches (the authors tie their batch to N);
// the scenario's m, a multiple of N, only cuts the stream into the batches figures are reported per.
//
// Per device d, forwards and backwards come in blocks of N microbatches that alternate between the groups:
// forwards G0, G1, G0, ... (forward f is group (f / N) % 2), backwards G1, G0, G1, ... (the counter starts at
// N, so the first backward block is G1's). The device runs 2N − 1 − d forwards, then strictly one forward and
// one backward, then the remaining backwards; there is no flush between batches. A group steps right after
// the last backward of its block. G1's forwards of block j all run after its step j − 1 and its backwards
// before step j: it reads one version, synchronously (τ = 0). G0's forwards of block j + 1 run before its
// step j: block j reads version max(j − 1, 0), kept with the newest (two versions, stashed for the backward),
// and its gradient lands on the newer one: W(t+1) = W(t) − η∇f(W(t−1)), τ = 1 after the first batch, as 2BW.
//
// One deviation from the authors' code: it takes no step during the final drain (the last blocks' gradients
// are dropped); here every block is applied, so that every microbatch's gradient reaches the weights.
#include <fmt/format.h>

#include "base/errors.h"
#include "schedules/registry.h"
#include "schedules/schedule.h"

namespace pipesim {
namespace {

class WPipe final : public Schedule {
 public:
  std::string label() const override { return "wpipe"; }
  PipelineLayout layout(int devices) const override { return PipelineLayout::interleaved(devices, 2); }
  OptimizerSync default_sync() const override { return OptimizerSync::kNone; }
  int microbatches_per_step(const PipelineSpec& spec) const override { return spec.devices; }

  void check(const PipelineSpec& spec) const override {
    if (spec.microbatches % spec.devices != 0) {
      throw InputError(fmt::format(
          "wpipe steps each half of the model after a block of N microbatches: m must be a multiple of N "
          "(got m={} for N={})",
          spec.microbatches, spec.devices));
    }
  }

  ExecutionPlan plan(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    check(spec);
    const int n = spec.devices;
    const int total = spec.total_microbatches();
    const PipelineLayout placement = layout(n);
    DeviceActionLists lists(n);
    for (int d = 0; d < n; ++d) lists[d] = device_actions(n, d, total);
    ExecutionPlan plan = plan_from_lists(placement, std::move(lists), total);
    plan.backward_reads = BackwardReads::kStashedWeights;
    plan.forward_reads.period_microbatches = n;
    plan.forward_reads.lag_of_stage.assign(2 * n, 0);
    for (int s = 0; s < n; ++s) plan.forward_reads.lag_of_stage[s] = 1;  // G0
    return plan;
  }

  // The first batch fills the loop (2N − 1 − d forwards on device d, of two batches' G0 pieces); the pattern
  // repeats every batch of N; a window microbatch's G0 backward and step come a batch and a block later.
  SteadyStateHint steady_state(const PipelineSpec& spec) const override {
    return {2 * spec.devices, spec.devices, 2 * spec.devices};  // a stream: its pattern repeats every block
  }

  WeightGuarantees guarantees(const PipelineSpec& spec) const override {
    const int n = spec.devices;
    WeightGuarantees g(2 * n);
    for (int s = 0; s < n; ++s) {  // G0: double-buffered, one step behind
      g[s].staleness_bound = g[s].steady_staleness = 1;
      g[s].weight_versions = 2;
    }
    for (int s = n; s < 2 * n; ++s) g[s].steady_staleness = 0;  // G1: synchronous
    return g;
  }

 private:
  // Device d's whole stream over `total` microbatches (a multiple of N).
  static ActionList device_actions(int n, int d, int total) {
    const int ops = 2 * total;  // every microbatch passes both of the device's pieces
    const int warmup = std::min(2 * n - 1 - d, ops);
    // Forward f: block f / N, of group (f / N) % 2 and that group's block (f / N) / 2.
    auto nth_forward = [n, d](int f) {
      const int block = f / n;
      const int group = block % 2;
      return forward(group * n + d, (block / 2) * n + f % n);
    };
    ActionList out;
    out.reserve(static_cast<std::size_t>(2 * ops + 2 * (total / n)));
    for (int f = 0; f < warmup; ++f) out.push_back(nth_forward(f));
    for (int t = 0; t < ops; ++t) {
      if (t + warmup < ops) out.push_back(nth_forward(t + warmup));
      // Backward t: counter c = t + N, block c / N of group (c / N) % 2 (G1 first).
      const int c = t + n;
      const int block = c / n;
      const int group = block % 2;
      const int group_block = group == 1 ? (block - 1) / 2 : block / 2 - 1;
      const int stage = group * n + d;
      out.push_back(backward(stage, group_block * n + c % n));
      if ((c + 1) % n == 0) out.push_back(optimizer_step(stage, group_block, /*synchronized=*/false));
    }
    return out;
  }
};

}  // namespace

std::unique_ptr<Schedule> make_wpipe(const ScheduleParams& /*params*/) {
  return std::make_unique<WPipe>();
}

}  // namespace pipesim
