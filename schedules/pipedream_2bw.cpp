// PipeDream-2BW: 1F1B without a flush, gradients coalesced over the m >= N microbatches of a batch, one step
// per m backwards on every stage, and double-buffered weights: microbatch k (1-based) reads version
// max(⌊(k−1)/m⌋−1, 0) in its forward and (stashed) backward. At most two versions; W(t+1) = W(t) −
// η∇f(W(t−1)), so τ = 1 after the first batch.
#include <fmt/format.h>

#include "base/errors.h"
#include "schedules/async_stream.h"
#include "schedules/registry.h"

namespace pipesim {
namespace {

class PipeDream2BW final : public AsyncStreamSchedule {
 public:
  std::string label() const override { return "pipedream-2bw"; }
  AsyncStreamRule rule(const PipelineSpec& spec) const override {
    if (spec.microbatches < spec.devices) {
      throw InputError(
          fmt::format("pipedream-2bw coalesces gradients over m >= N microbatches; got m={} for N={}",
                      spec.microbatches, spec.devices));
    }
    const ForwardReads double_buffered{
        .period_microbatches = spec.microbatches, .lag_versions = 1, .lag_of_stage = {}};
    return {spec.microbatches, one_f_one_b_limits(spec.devices), BackwardReads::kStashedWeights,
            double_buffered};
  }
};

}  // namespace

std::unique_ptr<Schedule> make_pipedream_2bw(const ScheduleParams& /*params*/) {
  return std::make_unique<PipeDream2BW>();
}

}  // namespace pipesim
