// pipesim export SCHEDULE --stages N --microbatches M [--chunks v] [--costs F,I,W] [--comm ms] [--csv FILE]
#include <fmt/format.h>

#include <iostream>

#include "api/quick_scenario.h"
#include "api/schedule_export.h"
#include "api/simulation.h"
#include "cli/commands.h"
#include "schedules/pytorch_csv.h"
#include "schedules/registry.h"
#include "sim/errors.h"
#include "sim/resource_estimate.h"

namespace pipesim {

std::string export_schedule_csv(const Scenario& scenario, const ScheduleRequest& request) {
  const std::unique_ptr<Schedule> schedule = make_schedule(request.name, request.params);
  const auto* static_schedule = dynamic_cast<const StaticSchedule*>(schedule.get());
  if (static_schedule == nullptr) {
    throw InputError(fmt::format("schedule '{}' decides at run time; only static schedules can be exported",
                                 schedule->label()));
  }
  PipelineSpec spec;
  spec.devices = scenario.stages;
  spec.microbatches = scenario.microbatches;
  spec.batches = 1;
  spec.sync = scenario.sync.value_or(schedule->default_sync());
  schedule->check(spec);
  const PipelineLayout layout = schedule->layout(scenario.stages);
  // One batch, no trace or graph kept, but the generators (zb-1p/2p) simulate it: the same estimate as a run.
  check_resources({layout.devices, layout.stages, scenario.microbatches, 1, false,
                   scenario.comm.model == CommSpec::Model::kLink},
                  schedule->label());
  // Cost-aware generators (zb-1p/2p) plan with the run's comm model, as in simulate_schedule.
  spec.make_comm = [scenario, layout] { return make_comm_model(scenario, layout); };
  const std::unique_ptr<CostModel> costs = make_cost_model(scenario, layout);
  return format_pytorch_csv(static_schedule->batch_actions(spec, *costs));
}

namespace {

struct ExportArgs {
  QuickScenarioArgs scenario;
  std::string csv_path;
};

}  // namespace

void add_export_command(CLI::App& app) {
  auto args = std::make_shared<ExportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "export",
      "write a static schedule's per-device lists for one batch in PyTorch's pipelining CSV format");
  add_quick_scenario_options(cmd, args->scenario);
  cmd->add_option("--csv", args->csv_path, "write the CSV to this file (default: standard output)");
  cmd->callback([args] {
    const std::string csv =
        export_schedule_csv(quick_scenario(args->scenario), quick_request(args->scenario));
    if (args->csv_path.empty()) {
      std::cout << csv;
    } else {
      write_file(args->csv_path, csv);
    }
  });
}

}  // namespace pipesim
