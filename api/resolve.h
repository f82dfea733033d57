#pragma once
// The one place where a scenario and one schedule request become what a run is made of (docs/design.md §7):
// the entry's effective pipeline (its pipeline: overrides), the schedule and its layout, the pipeline spec
// (N, m, the sync rule, the comm model that cost-aware generators plan with), the cost and comm models and
// the static memory. simulate_schedule, `pipesim costs`, `pipesim export` and the benchmarks all start here,
// so they cannot disagree about a stage's costs or memory.
#include <memory>
#include <string>
#include <vector>

#include "analysis/memory_model.h"
#include "io/scenario.h"
#include "schedules/schedule.h"
#include "sim/comm_model.h"
#include "sim/cost_model.h"
#include "sim/layout.h"
#include "sim/limits.h"

namespace pipesim {

struct ResolveOptions {
  // Check, before anything is sized by the run, that the schedule accepts the pipeline, that the run fits the
  // resource ceiling (sim/resource_estimate.h) and that the costs hold what the schedule needs (I and W,
  // M_W). Off for `pipesim costs`, which shows the costs without running anything.
  bool check = true;
  int batches = 0;             // the spec's batches (and the resource estimate's); 0: the scenario's
  bool task_graph = true;      // the run builds the task graph (resource estimate)
  bool records = true;         // the run keeps its trace (resource estimate); false: streamed
  bool fixed_batches = false;  // exactly the spec's batches, no steady-state search (resource estimate)
  Limits limits;               // the run's ceilings (and the balanced split's search's)
};

struct ResolvedRun {
  Scenario scenario;  // with the entry's pipeline: overrides applied
  std::unique_ptr<Schedule> schedule;
  std::string label;  // the schedule's label and the entry's pipeline, e.g. "1f1b-flush [B=128 m=4 b=32]"
  PipelineSpec spec;  // batches: ResolveOptions::batches or the scenario's
  PipelineLayout layout;
  std::unique_ptr<CostModel> costs;
  std::vector<StageStaticMemory> static_memory;  // per (virtual) stage
  double memory_capacity_bytes = 0;  // what one device's run may fill (capacity less reserve); 0 when unknown

  std::unique_ptr<CommModel> make_comm() const;
};

// Memory held regardless of activations, per (virtual) stage: from the transformer model, or the explicit
// costs' parameter_bytes (weights only).
std::vector<StageStaticMemory> static_memory(const Scenario& scenario, const PipelineLayout& layout,
                                             const Limits& limits);

// The cost model the scenario describes, for the given layout; `limits` bound a balanced split's search.
std::unique_ptr<CostModel> make_cost_model(const Scenario& scenario, const PipelineLayout& layout,
                                           const Limits& limits);
std::unique_ptr<CommModel> make_comm_model(const Scenario& scenario, const PipelineLayout& layout);
// The node of each pipeline device's first rank (ranks numbered as cost_models/transformer/job_topology.h)
// when a transformer scenario's comm is its profile's link and the profile has an inter_node_link: transfers
// between devices on different nodes then take that link. Empty when every device shares a node or nothing
// says.
std::vector<int> pipeline_device_nodes(const Scenario& scenario, int devices);

// The pipeline the schedule runs for the scenario (N, m, batches, optimizer sync, comm for cost-aware
// generators): what simulate_schedule plans with, and what the executor plans with.
PipelineSpec pipeline_spec_for(const Scenario& scenario, const Schedule& schedule);

// Throws InputError naming where the schedule was requested (file, line, key) when a check fails.
ResolvedRun resolve(const Scenario& scenario, const ScheduleRequest& request,
                    const ResolveOptions& options = {});

// The ops the run would simulate (sim/resource_estimate.h), without building it: for a command's whole work
// (sweep, check) before it starts and for progress weights. 0 when the request cannot run.
double estimated_ops(const Scenario& scenario, const ScheduleRequest& request,
                     const ResolveOptions& options = {});
// The same for a run already resolved (with the options it was resolved with).
double estimated_ops(const ResolvedRun& run, const ResolveOptions& options);

}  // namespace pipesim
