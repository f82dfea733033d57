#include "api/schedule_export.h"

#include <fmt/format.h>

#include "api/resolve.h"
#include "api/simulation.h"
#include "base/errors.h"
#include "schedules/pytorch_csv.h"

namespace pipesim {

std::string export_schedule_csv(const Scenario& scenario, const ScheduleRequest& request, bool with_comms,
                                const Limits& limits) {
  // One batch, no trace or graph kept, but the generators (zb-1p/2p) simulate it: the same estimate as a run.
  ResolveOptions one_batch;
  one_batch.batches = 1;
  one_batch.task_graph = false;
  one_batch.limits = limits;
  const ResolvedRun run = resolve(scenario, request, one_batch);
  const auto* static_schedule = dynamic_cast<const StaticSchedule*>(run.schedule.get());
  if (static_schedule == nullptr) {
    throw InputError(fmt::format("schedule '{}' decides at run time; only static schedules can be exported",
                                 run.schedule->label()));
  }
  if (run.layout.pipelines > 1) {
    // A PyTorch CSV names stages and ranks only: two copies of the model would read back as one V.
    throw InputError(
        fmt::format("schedule '{}' runs {} copies of the model side by side, which PyTorch's CSV "
                    "cannot say (it would read back as one pipeline)",
                    run.schedule->label(), run.layout.pipelines));
  }
  PipelineSpec spec = run.spec;
  spec.batches = 1;
  const DeviceActionLists lists = static_schedule->batch_actions(spec, *run.costs);
  return with_comms ? format_pytorch_csv_with_comms(lists, run.layout) : format_pytorch_csv(lists);
}

std::string export_scenario_entry_csv(const Scenario& scenario, int entry, bool with_comms,
                                      const Limits& limits) {
  const std::vector<ScheduleRequest> requests = requested_schedules(scenario);
  if (entry < 1 || entry > static_cast<int>(requests.size())) {
    throw InputError(fmt::format("--entry {}: the scenario {} has schedule entries 1 to {}", entry,
                                 scenario.source, requests.size()));
  }
  return export_schedule_csv(scenario, requests[entry - 1], with_comms, limits);
}

}  // namespace pipesim
