// Asynchronous 1F1B without stashing ("naive"): PipeDream's order and steps, but each backward reads the
// current weights, so Δ_i = N−i in steady state. One weight copy.
#include "schedules/async_stream.h"
#include "schedules/registry.h"

namespace pipesim {
namespace {

class Async1F1B final : public AsyncStreamSchedule {
 public:
  std::string label() const override { return "async-1f1b"; }
  AsyncStreamRule rule(const PipelineSpec& spec) const override {
    return {1, one_f_one_b_limits(spec.devices), BackwardReads::kCurrentWeights, {}};
  }
};

}  // namespace

std::unique_ptr<Schedule> make_async_1f1b(const ScheduleParams& /*params*/) {
  return std::make_unique<Async1F1B>();
}

}  // namespace pipesim
