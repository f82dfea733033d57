// pipesim show SCHEDULE --stages N --microbatches M [--costs F,B | F,I,W] [--comm ms] [--width cols]
#include <unistd.h>

#include <iostream>

#include "api/simulation.h"
#include "cli/commands.h"
#include "cli/quick_scenario_options.h"
#include "report/timeline_text.h"

namespace pipesim {
namespace {

struct ShowArgs {
  QuickScenarioArgs scenario;
  TimelineTextOptions timeline;
  std::string color = "auto";
};

}  // namespace

void add_show_command(CLI::App& app, const Limits& limits) {
  auto args = std::make_shared<ShowArgs>();
  CLI::App* cmd =
      app.add_subcommand("show", "draw a schedule's timeline in the terminal, one row per device");
  add_quick_scenario_options(cmd, args->scenario);
  cmd->add_option("--batches", args->scenario.batches, "batches to simulate")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--width", args->timeline.width, "columns of the timeline")
      ->check(CLI::Range(10, 100000))
      ->capture_default_str();
  cmd->add_option("--color", args->color,
                  "colour ops by kind: auto (when writing to a terminal), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}))
      ->capture_default_str();
  cmd->callback([args, &limits] {
    TimelineTextOptions options = args->timeline;
    options.color = args->color == "always" || (args->color == "auto" && isatty(STDOUT_FILENO));
    SimulationOptions simulation;
    simulation.analyze_graph = false;
    simulation.fixed_batches = true;  // draw the batches asked for
    simulation.limits = limits;
    const SimulationResult result =
        simulate_schedule(quick_scenario(args->scenario), quick_request(args->scenario), simulation);
    std::cout << render_timeline(result, options);
  });
}

}  // namespace pipesim
