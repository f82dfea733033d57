#pragma once
// What one simulated run will allocate, estimated from its effective pipeline before anything is allocated,
// and the ceiling it must stay under (README.md, "Limits"). All arithmetic is in double: counts of up to
// 2^31 stages times 2^31 microbatches cannot overflow it, and the estimate only has to be right within a
// small factor.
#include <string>

#include "sim/limits.h"

namespace pipesim {

// The run as the engine will see it: after an entry's pipeline: overrides, chunks and a CSV's sizes.
struct RunShape {
  int devices = 0;
  int stages = 0;  // virtual stages: devices x chunks
  int microbatches = 0;
  int batches = 0;
  bool task_graph = true;  // the critical-path graph is built (its barrier edges grow as stages x devices)
  bool link_comm = false;  // the link model keeps one free time per device pair
  bool records = true;     // the run keeps its trace (op by op); streamed runs hold about one batch's state
  // The least microbatches the steady-state search simulates (warm-up, two windows, drain), which can be far
  // more than batches x m (PACI's window is a microbatches); 0: batches x m.
  double steady_microbatches = 0;
};

struct ResourceEstimate {
  double ops = 0;          // F, B/I, W and U ops simulated (recorded when the run records)
  double transfers = 0;    // cross-stage transfers
  double graph_edges = 0;  // dependencies, same-device order and barrier edges
  double bytes = 0;        // everything the engine, trace and task graph hold at once
};

ResourceEstimate estimate_resources(const RunShape& shape);

// Throws ResourceLimitError when `ops`, summed over a command's `runs`, exceed limits.total_ops:
// "`what`: R runs would simulate about X ops in all (...), above the ceiling of C ops; `how_to_lower`, or
// raise the ceiling with --max-total-ops".
void check_total_ops(double ops, double runs, const std::string& what, const std::string& how_to_lower,
                     const Limits& limits);

// Throws ResourceLimitError when the estimate exceeds either of `limits`' per-run ceilings: "`where`: N =
// ..., m = ..., ...: this run would need about X GB (...), above the 4 GB ceiling; raise it with
// --max-memory-gb".
void check_resources(const RunShape& shape, const std::string& where, const Limits& limits);

}  // namespace pipesim
