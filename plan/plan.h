#pragma once
// `pipesim plan`: the best configurations of a transformer job on G GPUs at one global batch. Every candidate
// of plan/plan_space.h is bounded first (plan/plan_bounds.h); candidates are then taken in order of their
// throughput bound, in waves of a fixed size, and a candidate is simulated only when its memory bound fits
// and its throughput bound beats the K-th best result of its kind (synchronous or asynchronous, one per
// configuration apart from recomputation and ZeRO) found in the waves before. The bounds are proven, so the
// top K are exactly those a full search would find; the waves do not depend on the threads, so neither do the
// counts. Runs whose costs, bytes and memory are identical (e.g. selective recomputation under flash
// attention, which already recomputes the scores) are simulated once.
#include <cstddef>
#include <string>
#include <vector>

#include "plan/plan_space.h"
#include "sim/limits.h"

namespace pipesim {

struct PlanOptions {
  PlanSpaceOptions space;
  int top = 10;  // configurations kept of each kind
  int jobs = 0;  // threads; 0: every core
  bool progress = false;
  // Inside an MpiSession (distributed/mpi_session.h): rank 0 searches and the other ranks simulate the
  // candidates it hands them (distributed/work_farm.h); the result is the same as with threads.
  bool mpi = false;
  Limits limits;  // each candidate's ceilings, and the search's in all (sim/limits.h)
};

enum class CandidateFate {
  kNotRunnable,      // the schedule's rules refuse the pipeline (e.g. m < N), or a stage would hold no layer
  kOverMemoryBound,  // its memory lower bound exceeds the capacity: not simulated
  kPrunedByBound,    // its throughput bound cannot enter the top K: not simulated
  kSimulated,
  kReused,      // the figures of a simulated run with identical costs
  kOverMemory,  // simulated, and its peak exceeds the capacity
  kFailed,      // the simulation stopped (e.g. no steady state within the ops ceiling): reason says why
};
const char* fate_name(CandidateFate fate);

struct PlanRow {
  PlanCandidate candidate;
  CandidateFate fate = CandidateFate::kNotRunnable;
  std::string reason;  // kNotRunnable, kFailed: why; else empty
  std::string label;   // the schedule's label as it ran, e.g. "interleaved-1f1b(chunks=2)"
  bool synchronous = true;
  // Bounds (every runnable candidate).
  double busiest_work_s = 0;  // per step (one batch) on the busiest GPU
  double min_peak_bytes = 0;
  // Simulated (or reused) figures; the job's, per GPU where said.
  double step_s = 0;  // one optimizer step of the global batch (asynchronous: the time per batch of samples)
  double job_samples_per_s = 0;
  double tokens_per_gpu_s = 0;
  double tflops_per_gpu = 0;  // model FLOPs, recomputation not counted
  double mfu = 0;             // 0 when the profile has no peak for the dtype
  double peak_bytes = 0;      // per GPU
  double idle_fraction = 0;   // 1 - busiest_work_s / step_s: the busiest GPU's bubble and waits
};

struct PlanResult {
  int gpus = 0;
  int global_batch = 0;
  double capacity_bytes = 0;
  std::vector<PlanRow> rows;  // every candidate, in plan_candidates order
  // Indices into rows, best first, at most `top`: one per configuration apart from its memory settings
  // (recomputation and ZeRO), at the setting that is fastest and then needs the least memory.
  std::vector<size_t> best_sync;
  std::vector<size_t> best_async;
  size_t count(CandidateFate fate) const;
  double seconds = 0;  // wall time of the search
  bool leader = true;  // false on a serving MPI rank, whose result is empty
};

PlanResult run_plan(const Scenario& scenario, const PlanOptions& options);

}  // namespace pipesim
