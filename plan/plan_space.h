#pragma once
// The configurations `pipesim plan` searches for one model on G GPUs at one global batch: tensor parallel t
// (dividing a node's GPUs, the heads and the key/value heads), context parallel c (given; 2c dividing the
// sequence), pipeline stages p (at most the layers), data replicas d = G / (t c p) (dividing the batch), of
// which e expert-parallel (a mixture of experts: e dividing d and the routed experts),
// microbatch size b (m = B / (d b)), schedule and its parameters (PACI's accumulation a over the divisors of
// m that are powers of two), recomputation and ZeRO.
#include <string>
#include <vector>

#include "io/scenario.h"
#include "spec/transformer_model.h"

namespace pipesim {

struct PlanSpaceOptions {
  int gpus = 0;
  int global_batch = 0;  // samples per optimizer step of the whole job; 0: the scenario's job's
  // Each list empty: the default (see default_plan_schedules and the .cpp).
  std::vector<ScheduleRequest> schedules;
  std::vector<int> tensor;   // default: divisors of gpus_per_node that split heads and kv heads
  std::vector<int> context;  // default: 1 (no context parallelism); each must split the sequence
  // Expert-parallel degrees (a mixture of experts only); default: every power of two dividing both the
  // routed experts and d (1 for a dense model). A degree that does not divide them is skipped there.
  std::vector<int> expert;
  std::vector<int> pipeline;          // default: every divisor of G / t up to the layers
  std::vector<int> microbatch_sizes;  // default: 1, 2, 4, 8
  std::vector<Recompute> recompute;   // default: none, selective, full
  std::vector<int> zero;              // default: 0, 1, 2, 3 (0 alone when d = 1)
  bool sequence_parallel = true;      // with t > 1 (Megatron's usual setting with tensor parallelism)
};

// One point of the space; scenario_for_candidate turns it into a run.
struct PlanCandidate {
  int tensor = 1, pipeline = 1, data = 1;
  int context = 1;
  int microbatch_size = 1, microbatches = 1;
  Recompute recompute = Recompute::kNone;
  int zero = 0;
  ScheduleRequest schedule;
  // The scenario's layer_split list names another number of stages per model copy than this candidate has:
  // its layers are split evenly instead (the plan's report says for how many candidates and degrees).
  bool even_split = false;
  int expert = 1;  // expert-parallel ranks, of the d data-parallel ones
};

// The search's schedules when none are given: the synchronous ones a Megatron or torchtitan user picks from
// (1F1B, interleaved at 2, 3, 4 and 6 chunks, the depths Megatron users pick, the Zero Bubble family with
// 1F1B's memory, DualPipeV) and two asynchronous ones (PipeDream-2BW, PACI).
std::string default_plan_schedules();

// The largest global batch a plan takes (--global-batch's bound): m, b and d of every candidate fit an int.
inline constexpr int kMaxPlanGlobalBatch = 1 << 30;

// The global batch the plan uses: options.global_batch, or the scenario's job's: its replica's batch
// (pipeline.global_batch, else m x b) times parallel.data. Throws InputError when that is above
// kMaxPlanGlobalBatch.
int plan_global_batch(const Scenario& scenario, const PlanSpaceOptions& options);

// Every candidate, in a fixed order (t, p, b, schedule, recompute, ZeRO). Throws InputError when the scenario
// has no transformer model or no configuration of the GPUs can hold the batch (naming why).
std::vector<PlanCandidate> plan_candidates(const Scenario& scenario, const PlanSpaceOptions& options);

// The scenario one candidate runs: the base scenario with N, m, b, the job and the recomputation replaced.
Scenario scenario_for_candidate(const Scenario& base, const PlanCandidate& candidate, bool sequence_parallel);

// "t=8 p=4 d=32 b=1 m=16 recompute=none zero=1" (with "c=2" after t when context parallel, "e=8" after d
// when expert parallel)
std::string candidate_shape_text(const PlanCandidate& candidate);

}  // namespace pipesim
