#pragma once
// The command-line options of a quick scenario (api/quick_scenario.h), shared by `pipesim show` and
// `pipesim export`.
#include <CLI/CLI.hpp>

#include "api/quick_scenario.h"

namespace pipesim {

// Adds SCHEDULE, --stages, --microbatches, --chunks, --costs and --comm to a subcommand.
void add_quick_scenario_options(CLI::App* cmd, QuickScenarioArgs& args);

}  // namespace pipesim
