#pragma once
// A scenario as plain data: the pipeline shape, the costs, the communication model, the optimizer
// synchronisation and the schedules to compare (io/scenario.h reads one from YAML).
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "schedules/schedule.h"
#include "schedules/schedule_params.h"
#include "spec/executor_section.h"
#include "spec/explicit_cost_table.h"
#include "spec/measured_run.h"
#include "spec/transformer_model.h"

namespace pipesim {

// The key of pipeline: that holds the layer split (a transformer scenario's).
inline constexpr const char* kLayerSplitKey = "layer_split";

// A schedule entry may fix its own pipeline shape (`pipeline:` in the entry), e.g. PACI at a = m beside
// 1F1B-flush at several m, all at one global batch.
struct PipelineOverride {
  std::optional<int> microbatches;
  std::optional<int> microbatch_size;
  std::optional<int> global_batch;
  std::optional<LayerSplit> layer_split;  // transformer scenarios only
  std::vector<int> stage_layers;          // layer_split kExplicit: its list
  bool empty() const { return !microbatches && !microbatch_size && !global_batch && !layer_split; }
};

struct ScheduleRequest {
  std::string name;
  ScheduleParams params;
  PipelineOverride pipeline = {};  // a default initializer keeps {name, params} initialization warning-free
};

struct CommSpec {
  enum class Model { kFixedLatency, kLink };
  Model model = Model::kFixedLatency;
  std::vector<TimeNs> latency_ns;     // fixed latency: per sending device; link: one value for all links
  double bandwidth_bytes_per_ns = 0;  // link only (1 GB/s = 1 byte/ns)
  bool blocking = false;              // transfers hold both devices' compute streams (sim/comm_model.h)
  // The link is the hardware profile's (a transformer scenario without its own comm.model): pipeline ranks
  // on different nodes then send over the profile's inter_node_link (api/resolve.h, job_comm).
  bool from_profile = false;
};

struct Scenario {
  std::string name;
  std::string source;  // the file it came from
  // N, the pipeline's devices, as the YAML's pipeline.stages names them (one stage per device before a
  // schedule's chunks; PipelineLayout::stages counts virtual stages, devices x chunks).
  int stages = 1;
  int microbatches = 1;
  int microbatch_size = 1;
  int global_batch = 0;  // > 0: samples per batch instead of microbatch_size; b = global_batch / m (a mean)
  // b: microbatch_size, or global_batch / m (fractional when the batch does not split evenly: the mean size).
  double samples_per_microbatch() const;
  int batches = 4;
  int seq_len = 0;                              // tokens per sample; 0 when unknown (no tokens/s then)
  std::optional<OptimizerSync> sync;            // unset: each schedule's default
  ExplicitCostTable costs;                      // explicit `costs:`; empty when `model:` is given
  double memory_capacity_gb = 0;                // costs.memory_capacity_gb (GiB): `fits` for explicit costs
  std::optional<TransformerSetup> transformer;  // `model:` + `hardware:`: costs predicted (cost_models/)
  bool backward_split_given = false;            // the scenario gave I and W separately
  // Where costs.weight_grad_activation_bytes (M_W) should have been, when explicit costs from a file leave it
  // out; empty when given, predicted by the transformer model, or built in code.
  std::string weight_grad_memory_missing_where;
  CommSpec comm;
  std::vector<ScheduleRequest> schedules;  // empty: every registered schedule
  // pipeline: keys given on the command line (--set pipeline.K, a sweep's axes): they win over a schedule
  // entry's own pipeline: (scenario_for), so an override applies to every entry. Holds microbatches,
  // microbatch_size, global_batch and layer_split when set.
  std::set<std::string> pinned_pipeline_keys;
  ExecutorSection executor;  // `executor:`: what `pipesim execute` trains
  // The command's --allow-unmodelled: a model with features the costs do not represent (model.moe, ...)
  // runs as its dense stand-in, every figure bannered, instead of being refused (api/unmodelled_check.h).
  bool allow_unmodelled = false;
  // `measured:`: what a published run of this job measured, to compare the prediction with.
  std::optional<MeasuredRun> measured;
};

// A global batch that m microbatches do not divide: B mod m microbatches of ⌊B/m⌋ + 1 samples and the rest
// of ⌊B/m⌋ (as torch.tensor_split cuts it). larger_count 0: every microbatch holds samples_per_microbatch().
struct UnevenSplit {
  int smaller = 0;
  int larger_count = 0;
};
UnevenSplit uneven_split(const Scenario& scenario);
// "5.33" for an even or mean b, "5-6" for microbatches of 5 and 6 samples.
std::string microbatch_size_text(const Scenario& scenario);

// The scenario as one schedule entry sees it: its `pipeline:` overrides applied, except the keys the command
// line pinned (Scenario::pinned_pipeline_keys; a pinned microbatch_size also drops the entry's global_batch
// and a pinned global_batch its microbatch_size). Throws InputError naming the entry when the result is
// inconsistent (a global batch smaller than m).
Scenario scenario_for(const Scenario& scenario, const ScheduleRequest& request);
// " [B=128 m=24 b=5.33]" for an entry with `pipeline:` overrides, "" otherwise (appended to the schedule
// label).
std::string pipeline_label(const Scenario& effective, const ScheduleRequest& request);

}  // namespace pipesim
