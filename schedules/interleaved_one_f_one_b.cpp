// Megatron's interleaved 1F1B (virtual pipeline): each device holds `chunks` stages (chunk c of device d is
// stage c*N + d). Microbatches go through the chunks in rounds of k: k = N when m is a multiple of N
// (Megatron), otherwise k = m / (m div N) as PyTorch's ScheduleInterleaved1F1B does, which needs m divisible
// by m div N (any m below 2N qualifies: one round of m).
#include <fmt/format.h>

#include <algorithm>

#include "schedules/interleaved_rounds.h"
#include "schedules/registry.h"

namespace pipesim {
namespace {

class InterleavedOneFOneB final : public ListBuilderSchedule<InterleavedOneFOneB> {
 public:
  explicit InterleavedOneFOneB(int chunks) : chunks_(chunks) {}

  std::string label() const override { return fmt::format("interleaved-1f1b(chunks={})", chunks_); }
  PipelineLayout layout(int devices) const override { return PipelineLayout::interleaved(devices, chunks_); }

  void check(const PipelineSpec& spec) const override { InterleavedRounds::check(spec, label()); }

  // Built the same way into either container: a vector for the batch's lists, runs for the plan.
  template <typename List>
  std::vector<List> build_lists(const PipelineSpec& spec) const {
    check(spec);
    const int n = spec.devices;
    const int v = chunks_;
    const int slots = spec.microbatches * v;  // (microbatch, chunk) pairs per device
    const InterleavedRounds order(spec, v);
    std::vector<List> lists(n);
    for (int d = 0; d < n; ++d) {
      auto fwd = [&](int k) { return forward(order.forward_stage(d, k), order.microbatch(k)); };
      auto bwd = [&](int k) { return backward(order.backward_stage(d, k), order.microbatch(k)); };
      // Megatron's warm-up: two forwards per later device, plus one round per extra chunk.
      const int warmup = v == 1 ? std::min(n - 1 - d, slots)
                                : std::min((n - 1 - d) * 2 + (v - 1) * order.microbatches_per_round(), slots);
      for (int k = 0; k < warmup; ++k) lists[d].push_back(fwd(k));
      for (int k = 0; k < slots - warmup; ++k) {
        lists[d].push_back(fwd(warmup + k));
        lists[d].push_back(bwd(k));
      }
      for (int k = slots - warmup; k < slots; ++k) lists[d].push_back(bwd(k));
    }
    return lists;
  }

 private:
  int chunks_;
};

}  // namespace

std::unique_ptr<Schedule> make_interleaved_one_f_one_b(const ScheduleParams& params) {
  return std::make_unique<InterleavedOneFOneB>(params.get_int("chunks", 2, 1));
}

}  // namespace pipesim
