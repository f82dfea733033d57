#pragma once
// What one simulated run will allocate, estimated from its effective pipeline before anything is allocated,
// and the ceiling it must stay under (README.md, "Limits"). All arithmetic is in double: counts of up to
// 2^31 stages times 2^31 microbatches cannot overflow it, and the estimate only has to be right within a
// small factor.
#include <string>

namespace pipesim {

// The run as the engine will see it: after an entry's pipeline: overrides, chunks and a CSV's sizes.
struct RunShape {
  int devices = 0;
  int stages = 0;  // virtual stages: devices x chunks
  int microbatches = 0;
  int batches = 0;
  bool task_graph = true;  // the critical-path graph is built (its barrier edges grow as stages x devices)
  bool link_comm = false;  // the link model keeps one free time per device pair
};

struct ResourceEstimate {
  double ops = 0;          // F, B/I, W and U records
  double transfers = 0;    // cross-stage transfers
  double graph_edges = 0;  // dependencies, same-device order and barrier edges
  double bytes = 0;        // everything the engine, trace and task graph hold at once
};

ResourceEstimate estimate_resources(const RunShape& shape);

// The ceiling in bytes for one run; 4 GB unless --max-memory-gb changed it.
double memory_ceiling_bytes();
void set_memory_ceiling_gb(double gb);

// Throws InputError when the estimate exceeds the ceiling: "`where`: N = ..., m = ..., ...: this run would
// need about X GB (...), above the 4 GB ceiling; raise it with --max-memory-gb".
void check_resources(const RunShape& shape, const std::string& where);

}  // namespace pipesim
