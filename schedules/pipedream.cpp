// PipeDream (weight stashing): 1F1B without a flush, a step after every backward, and each backward reads the
// version its forward used. Stage i keeps up to N−i+1 versions; Δ = 0 and τ ≤ N−i.
#include "schedules/async_stream.h"
#include "schedules/registry.h"

namespace pipesim {
namespace {

class PipeDream final : public AsyncStreamSchedule {
 public:
  std::string label() const override { return "pipedream"; }
  AsyncStreamRule rule(const PipelineSpec& spec) const override {
    return {1, one_f_one_b_limits(spec.devices), BackwardReads::kStashedWeights, {}};
  }
};

}  // namespace

std::unique_ptr<Schedule> make_pipedream(const ScheduleParams& /*params*/) {
  return std::make_unique<PipeDream>();
}

}  // namespace pipesim
