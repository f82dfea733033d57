// GPipe: every forward of the batch, then every backward, then the optimizer step.
#include "schedules/registry.h"

namespace pipesim {
namespace {

template <typename List>
std::vector<List> gpipe_lists(int n, int m) {
  std::vector<List> lists(n);
  for (int d = 0; d < n; ++d) {
    for (int mb = 0; mb < m; ++mb) lists[d].push_back(forward(d, mb));
    for (int mb = 0; mb < m; ++mb) lists[d].push_back(backward(d, mb));
  }
  return lists;
}

class GPipe final : public ListBuilderSchedule<GPipe> {
 public:
  std::string label() const override { return "gpipe"; }
  template <typename List>
  std::vector<List> build_lists(const PipelineSpec& spec) const {
    return gpipe_lists<List>(spec.devices, spec.microbatches);
  }
};

}  // namespace

std::unique_ptr<Schedule> make_gpipe(const ScheduleParams& /*params*/) {
  return std::make_unique<GPipe>();
}

}  // namespace pipesim
