// PACI (arXiv 2606.07881): one weight copy; each stage steps after every a-th backward it runs, independently
// of the others; backwards have priority; a forward may start on stage i only while q_i < L_i (default
// N+1−i). The backward reads the current weights, so Δ_i ≤ ⌈(L_i−1)/a⌉, which is the paper's ⌈(N−i)/a⌉ at the
// default.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "schedules/async_stream.h"
#include "schedules/registry.h"

namespace pipesim {
namespace {

class Paci final : public AsyncStreamSchedule {
 public:
  Paci(int accumulation, std::vector<int> limits, std::string where)
      : accumulation_(accumulation), limits_(std::move(limits)), where_(std::move(where)) {}

  // A display label only: results carry the parameters typed (schedules/schedule_params.h).
  std::string label() const override {
    if (limits_.empty()) return fmt::format("paci(accumulation={})", accumulation_);
    return fmt::format("paci(accumulation={},max_in_flight={})", accumulation_, fmt::join(limits_, ","));
  }
  AsyncStreamRule rule(const PipelineSpec& spec) const override {
    return {accumulation_, limits(spec.devices), BackwardReads::kCurrentWeights, {}};
  }

 private:
  std::vector<int> limits(int stages) const {
    return limits_.empty() ? one_f_one_b_limits(stages) : in_flight_limits(limits_, stages, where_);
  }

  int accumulation_;
  std::vector<int> limits_;  // as given; empty: N+1−i
  std::string where_;
};

}  // namespace

std::unique_ptr<Schedule> make_paci(const ScheduleParams& params) {
  return std::make_unique<Paci>(params.get_int("accumulation", 1, 1), params.get_int_list("max_in_flight", 1),
                                params.where());
}

}  // namespace pipesim
