// libFuzzer target: `pipesim plan` on the scenario the input describes (a transformer job), over a small
// space (8 GPUs, four schedules, microbatch sizes 1 and 2; a mixture of experts at expert parallelism 1 and 2
// and microbatch size 1), then its writers: the plan's report and its CSV.
// The scenario reader's and the planner's InputError (no transformer model, no configuration fits, the work
// over the ceilings set here) is the expected answer; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/unmodelled_check.h"
#include "base/errors.h"
#include "io/scenario.h"
#include "plan/plan.h"
#include "plan/plan_report.h"
#include "sim/limits.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const pipesim::Scenario scenario = pipesim::parse_scenario(text, "fuzz.yaml");
    pipesim::require_modelled(scenario);
    // Keep each input fast: the ceilings' own tests are elsewhere.
    pipesim::PlanOptions options;
    options.limits.memory_bytes = 0.05e9;
    options.limits.ops = 2e4;
    options.limits.total_ops = 2e5;
    options.space.gpus = 8;
    for (const char* name : {"1f1b-flush", "zb-h1", "pipedream-2bw", "paci"})
      options.space.schedules.push_back({name, pipesim::ScheduleParams("fuzz")});
    options.space.microbatch_sizes = {1, 2};
    // A mixture of experts prices two kinds of layer per candidate: two expert-parallel degrees (not every
    // power of two; a dense model takes only 1) and one microbatch size keep it as fast as a dense input.
    if (scenario.transformer && scenario.transformer->model.moe.any()) {
      options.space.expert = {1, 2};
      options.space.microbatch_sizes = {1};
    }
    options.top = 3;
    options.jobs = 1;
    const pipesim::PlanResult result = pipesim::run_plan(scenario, options);
    pipesim::format_plan(scenario, options, result);
    pipesim::plan_csv(result);
  } catch (const pipesim::InputError&) {
  }
  return 0;
}
