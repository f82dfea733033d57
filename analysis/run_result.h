#pragma once
// One simulated run of one schedule: the trace and every figure measured on it. Built by api/simulation.h,
// read by report/ (table, JSON, CSV, trace, timeline) and the run assertions.
#include <string>
#include <vector>

#include "analysis/drift.h"
#include "analysis/memory_model.h"
#include "analysis/task_graph.h"
#include "schedules/guarantees.h"
#include "schedules/schedule.h"
#include "schedules/schedule_params.h"
#include "sim/metrics.h"
#include "sim/trace.h"

namespace pipesim {

struct SimulationResult {
  std::string label;                    // display label, with parameters and the entry's pipeline overrides
  std::string schedule_label;           // the schedule's own display label, without the pipeline overrides
  std::string schedule_name;            // as requested: a registry name or csv:PATH
  ScheduleParamValues schedule_params;  // typed, as the schedule ran (given or default)
  int virtual_stages = 0;               // the layout's stages: N x chunks
  PipelineSpec spec;                    // spec.batches: the batches actually simulated
  int batches_requested = 1;            // the scenario's `batches`, a minimum
  int simulations = 0;                  // runs the steady-state search took (sim/steady_state.h)
  double microbatch_size = 1;           // b (a mean when the global batch does not split evenly)
  int seq_len = 0;
  std::vector<Bytes> activation_bytes_per_microbatch;  // per device, over its chunks (M_B)
  RunTrace trace;
  RunMetrics metrics;  // over the steady-state window microbatches [first_steady_microbatch, end_microbatch)
  TaskGraphReport graph;
  DriftReport drift;                 // measured on the trace; means over the metrics' steady-state batches
  WeightGuarantees guarantees;       // what the schedule promises, per stage
  MemoryReport memory;               // weights x live versions + gradients + optimizer state + activations
  double memory_capacity_bytes = 0;  // one device's memory, from the hardware profile; 0 when unknown
  bool weight_memory_known = false;  // weights modelled (transformer model, or explicit parameter_bytes)
  // Transformer scenarios: the model's FLOPs per sample (forward and backward, nothing recomputed counted),
  // one device's peak FLOP/s in the model's dtype, and the modelling choices behind the figures. 0 and ""
  // when unknown (explicit costs, a profile without the dtype's peak).
  double model_flops_per_sample = 0;
  double peak_flops_per_device = 0;  // one GPU's
  // GPUs behind each pipeline device: a tensor-parallel group of t (the per-GPU figures divide by them too).
  int gpus_per_device = 1;
  std::string model_choices;
  // What the figures leave out (--allow-unmodelled): "model.moe: a mixture of experts (...)", one a feature.
  std::vector<std::string> unmodelled;
  std::string
      profile_kind;  // the hardware profile's provenance.kind (spec, published, measured); "" without one
  // b as the table shows it: "4", or "10-11" where B/m is not whole (microbatch_size is then the mean).
  std::string microbatch_size_text;
};

}  // namespace pipesim
