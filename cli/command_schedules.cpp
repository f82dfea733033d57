// pipesim schedules: the registered schedules with their PyTorch class names and a one-line description.
#include <iostream>

#include "cli/commands.h"
#include "report/format.h"
#include "schedules/registry.h"

namespace pipesim {

void add_schedules_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("schedules", "list the schedules pipesim can simulate");
  cmd->callback([] {
    std::vector<std::vector<std::string>> rows;
    for (const ScheduleInfo& info : registered_schedules()) {
      std::string pytorch;
      for (const ScheduleAlias& alias : pytorch_schedule_aliases()) {
        if (alias.name == info.name) pytorch = alias.pytorch_name;
      }
      rows.push_back({info.name, info.description + (pytorch.empty() ? "" : " (PyTorch: " + pytorch + ")")});
    }
    std::cout << render_table({"schedule", "description"}, rows);
  });
}

}  // namespace pipesim
