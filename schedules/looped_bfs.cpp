// PyTorch's ScheduleLoopedBFS (breadth-first pipeline parallelism, Lamy-Poirier, arXiv 2211.05953): the
// looped placement (chunk c of device d is stage c N + d), and each device runs every microbatch's forward of
// its first chunk, then of its next chunk, ..., then the backwards chunk by chunk in reverse, each chunk's
// microbatches from the last to the first. GPipe on each chunk in turn: activation memory of v m microbatches
// per device, a bubble that chunks do not shrink, but each chunk's weights are done with early (what the
// paper pairs with sharded data parallelism).
#include <fmt/format.h>

#include "schedules/registry.h"

namespace pipesim {
namespace {

class LoopedBfs final : public StaticSchedule {
 public:
  explicit LoopedBfs(int chunks) : chunks_(chunks) {}

  std::string label() const override { return fmt::format("looped-bfs(chunks={})", chunks_); }
  PipelineLayout layout(int devices) const override { return PipelineLayout::interleaved(devices, chunks_); }

  DeviceActionLists batch_actions(const PipelineSpec& spec, const CostModel& /*costs*/) const override {
    const int n = spec.devices;
    const int m = spec.microbatches;
    DeviceActionLists lists(n);
    for (int d = 0; d < n; ++d) {
      for (int chunk = 0; chunk < chunks_; ++chunk) {
        for (int mb = 0; mb < m; ++mb) lists[d].push_back(forward(chunk * n + d, mb));
      }
      for (int chunk = chunks_ - 1; chunk >= 0; --chunk) {
        for (int mb = m - 1; mb >= 0; --mb) lists[d].push_back(backward(chunk * n + d, mb));
      }
    }
    return lists;
  }

 private:
  int chunks_;
};

}  // namespace

std::unique_ptr<Schedule> make_looped_bfs(const ScheduleParams& params) {
  return std::make_unique<LoopedBfs>(params.get_int("chunks", 2, 1));
}

}  // namespace pipesim
