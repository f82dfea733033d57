#include "schedules/schedule.h"

#include "schedules/repeating_list_policy.h"
#include "schedules/static_list_policy.h"

namespace pipesim {

const NameTable<OptimizerSync>& sync_names() {
  static const NameTable<OptimizerSync> names{{"barrier", OptimizerSync::kBarrier},
                                              {"post-validation", OptimizerSync::kPostValidation},
                                              {"none", OptimizerSync::kNone}};
  return names;
}

DeviceActionLists StaticSchedule::all_actions(const PipelineSpec& spec, const CostModel& costs) const {
  return repeat_batches(layout(spec.devices), batch_actions(spec, costs), spec);
}

DeviceActionLists repeat_batches(const PipelineLayout& shape, const DeviceActionLists& one_batch,
                                 const PipelineSpec& spec) {
  const bool synchronized = spec.sync == OptimizerSync::kBarrier;
  DeviceActionLists lists(spec.devices);
  for (int d = 0; d < spec.devices; ++d) {
    const std::vector<int> stages = shape.stages_on(d);
    lists[d].reserve((one_batch[d].size() + stages.size()) * spec.batches);
    for (int batch = 0; batch < spec.batches; ++batch) {
      for (Action a : one_batch[d]) {
        a.microbatch += batch * spec.microbatches;
        lists[d].push_back(a);
      }
      for (int stage : stages) lists[d].push_back(optimizer_step(stage, batch, synchronized));
    }
  }
  return lists;
}

std::vector<ActionRuns> StaticSchedule::batch_runs(const PipelineSpec& spec, const CostModel& costs) const {
  const DeviceActionLists lists = batch_actions(spec, costs);
  return std::vector<ActionRuns>(lists.begin(), lists.end());
}

ExecutionPlan StaticSchedule::plan(const PipelineSpec& spec, const CostModel& costs) const {
  // One batch's lists, repeated by the policy: the plan's memory does not grow with the batches run.
  ExecutionPlan plan;
  plan.layout = layout(spec.devices);
  plan.total_microbatches = spec.total_microbatches();
  auto lists = std::make_shared<RepeatedBatchLists>();
  lists->one_batch = batch_runs(spec, costs);
  lists->batches = spec.batches;
  lists->microbatches_per_batch = spec.microbatches;
  lists->synchronized_steps = spec.sync == OptimizerSync::kBarrier;
  plan.repeated = lists;
  for (int d = 0; d < spec.devices; ++d) {
    plan.policies.push_back(std::make_unique<RepeatingListPolicy>(lists, d, plan.layout.stages_on(d)));
  }
  return plan;
}

ExecutionPlan plan_from_lists(const PipelineLayout& layout, DeviceActionLists lists, int total_microbatches) {
  ExecutionPlan plan;
  plan.layout = layout;
  plan.total_microbatches = total_microbatches;
  for (auto& list : lists) plan.policies.push_back(std::make_unique<StaticListPolicy>(std::move(list)));
  return plan;
}

}  // namespace pipesim
