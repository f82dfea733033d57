#include "cli/quick_scenario_options.h"

namespace pipesim {

void add_quick_scenario_options(CLI::App* cmd, QuickScenarioArgs& args) {
  cmd->add_option("schedule", args.schedule, "schedule name, name:key=value, or csv:PATH")->required();
  cmd->add_option("--stages,-N", args.stages, "devices N")->check(CLI::Range(1, 4096))->capture_default_str();
  cmd->add_option("--microbatches,-m", args.microbatches, "microbatches per batch")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--chunks", args.chunks, "stages per device (sets the schedule's 'chunks' parameter)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--costs", args.costs, "per-microbatch times in ms: F,B or F,I,W (B = I + W)")
      ->capture_default_str();
  cmd->add_option("--comm", args.comm_ms, "latency of every cross-device transfer in ms")
      ->capture_default_str();
}

}  // namespace pipesim
