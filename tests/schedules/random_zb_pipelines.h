#pragma once
// Seeded random pipelines for the Zero Bubble search's property tests, stated directly: N, m, the optimizer
// sync, per-device costs and the comm, as the scenario text these tests once read through the api drew them
// (tests/random_scenarios.h's random_costs) and as api/resolve.cpp turns them into a spec, explicit costs
// and a comm model. Nothing above schedules/.
#include <fmt/format.h>

#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "schedules/zb_greedy.h"
#include "schedules/zb_handcrafted.h"
#include "sim/comm_model.h"
#include "tests/schedules/schedule_runs.h"
#include "tests/sim/stage_table_costs.h"

namespace pipesim::test {

struct RandomZbPipeline {
  ScheduleRunSpec setup;           // N, m, one batch, the sync and the comm; setup.name is the schedule's
  StageCostTable devices;          // per device, as a scenario's explicit `costs:` gives them
  std::vector<TimeNs> latency_ns;  // per device: the fixed comm latency (0 with the link model)
  std::string text;                // what the pipeline is, for failure messages
};

// N in 2..8, m in 1..3N, uneven F, I, W in [0.5, 3) ms to the microsecond, activation bytes in [0.5, 3) MB,
// M_W 0.4 MB, comm a fixed latency of 0, 0.15 or 0.3 ms per transfer or (link) the link model at 2 GB/s and
// 0.1 ms; odd k a barrier, even k post-validation. The draws come in random_costs' order as GCC evaluates
// its format arguments (right to left: parameter bytes, activation bytes, the latency, W, I, F), so each
// seed gives the pipeline it gave as scenario text.
inline RandomZbPipeline random_zb_pipeline(std::mt19937& rng, int k, bool link = false) {
  RandomZbPipeline p;
  const int stages = std::uniform_int_distribution<int>(2, 8)(rng);
  const int microbatches = std::uniform_int_distribution<int>(1, 3 * stages)(rng);
  p.setup = schedule_run("zb-2p", stages, microbatches, 1);
  p.setup.sync = k % 2 ? OptimizerSync::kBarrier : OptimizerSync::kPostValidation;
  // A value as the scenario text wrote it (3 decimals) and the reader parsed it.
  std::uniform_real_distribution<double> ms(0.5, 3.0);
  const auto drawn = [&](double scale) {
    std::vector<double> values;
    for (int s = 0; s < stages; ++s) values.push_back(std::stod(fmt::format("{:.3f}", scale * ms(rng))));
    return values;
  };
  drawn(3e6);  // parameter bytes: static memory, which the search does not read
  const std::vector<double> activation = drawn(1e6);
  const double latency_ms = link ? 0 : 0.15 * std::uniform_int_distribution<int>(0, 2)(rng);
  const std::vector<double> weight = drawn(1), input = drawn(1), forward = drawn(1);
  StageCostTable& t = p.devices;
  for (int d = 0; d < stages; ++d) {
    t.forward_ns.push_back(ms_to_ns(forward[d]));
    t.input_ns.push_back(ms_to_ns(input[d]));
    t.weight_ns.push_back(ms_to_ns(weight[d]));
    t.activation_bytes.push_back(static_cast<Bytes>(std::llround(activation[d])));
  }
  t.optimizer_ns.assign(stages, 0);
  t.weight_grad_activation_bytes.assign(stages, 400'000);
  t.transfer_bytes.assign(stages, 0);
  if (link) {
    p.setup.comm = [](int devices) { return std::make_unique<LinkComm>(devices, 2.0, ms_to_ns(0.1)); };
    p.latency_ns.assign(stages, 0);
  } else {
    p.setup.latency_ns = ms_to_ns(std::stod(fmt::format("{:.2f}", latency_ms)));
    p.latency_ns.assign(stages, p.setup.latency_ns);
  }
  const auto list = [](const std::vector<TimeNs>& ns) {
    std::string out;
    for (TimeNs v : ns) out += fmt::format("{}{:g}", out.empty() ? "" : ", ", ns_to_ms(v));
    return "[" + out + "]";
  };
  p.text = fmt::format("N={} m={} {} F={} I={} W={} {}\n", stages, microbatches,
                       k % 2 ? "barrier" : "post-validation", list(t.forward_ns), list(t.input_ns),
                       list(t.weight_ns),
                       link ? std::string("link 2 GB/s 0.1 ms") : fmt::format("comm {:g} ms", latency_ms));
  return p;
}

// The pipeline's schedule `name` prepared (spec, layout, comm; throws InputError for a shape it refuses) and
// its costs on that layout (a device's split over its chunks, as explicit costs are).
struct RandomZbRun {
  PreparedSchedule prepared;
  StageTableCosts costs;
};

inline RandomZbRun prepare_random_zb(const RandomZbPipeline& pipeline, const std::string& name = "zb-2p") {
  ScheduleRunSpec setup = pipeline.setup;
  setup.name = name;
  PreparedSchedule prepared = prepare_schedule(setup);
  StageTableCosts costs = device_costs_on(prepared.layout, pipeline.devices);
  return {std::move(prepared), std::move(costs)};
}

// The lists the search can meet under 2N microbatches of memory: the greedy under each flag setting, ZB-H1,
// ZB-H2 and 1F1B's split order.
inline std::vector<DeviceActionLists> zb_search_candidates(const PipelineSpec& spec, const CostModel& costs) {
  const ZbProblem problem = make_zb_problem(spec, costs, 2.0);
  std::vector<DeviceActionLists> candidates;
  for (int index = 0; index < kZbFlagCombinations; ++index) {
    if (auto plan = zb_greedy_schedule(problem, ZbFlags::from_index(index)))
      candidates.push_back(plan->lists);
  }
  candidates.push_back(zb_h1_lists(spec.devices, spec.microbatches));
  candidates.push_back(zb_h2_lists(spec.devices, spec.microbatches));
  candidates.push_back(one_f_one_b_split_lists(spec.devices, spec.microbatches));
  return candidates;
}

}  // namespace pipesim::test
