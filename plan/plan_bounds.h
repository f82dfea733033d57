#pragma once
// What `pipesim plan` knows about a configuration before simulating it, from the run's own cost model, and
// why each figure is a bound:
//   step time: a device runs its ops one at a time, so a batch takes at least the busiest device's ops of one
//     batch: for each stage it holds, F and its backward (B, or I and W when the schedule splits it) of every
//     microbatch that visits the stage, and its optimizer steps (one per batch under a synchronous schedule,
//     m / microbatches_per_step for an asynchronous one). Tensor-parallel collectives are inside F and the
//     backward, the data-parallel reduction inside U: the unavoidable communication is counted. A schedule
//     that fuses a forward with another microbatch's backward (DualPipe, 1f1b-overlap) may hide each op's
//     hideable part (CostModel::hideable_ns: the expert all-to-alls) under the other's compute, so for it the
//     ops count without that part.
//   memory: a device holds its stages' weights, gradients and optimizer state (and any buffer the model
//     states) throughout, and at some moment at least one microbatch's activations of a stage it holds.
// A configuration whose throughput bound cannot beat the results kept, or whose memory bound exceeds the
// capacity, is not simulated; a simulated figure outside its bound is an internal error.
#include <string>

#include "api/resolve.h"

namespace pipesim {

struct CandidateBounds {
  bool synchronous = true;
  double busiest_work_s = 0;  // per batch (m microbatches) on the busiest device
  double min_peak_bytes = 0;  // the busiest device's peak is at least this
};

CandidateBounds candidate_bounds(const ResolvedRun& run);

// A key equal for two runs whose simulations are the same: the schedule and pipeline shape, each stage's op
// durations, bytes and static memory, and one transfer's timing on each link a stage sends over.
std::string simulation_fingerprint(const ResolvedRun& run);

}  // namespace pipesim
