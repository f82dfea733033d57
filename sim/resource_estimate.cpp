#include "sim/resource_estimate.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/errors.h"
#include "sim/action.h"
#include "sim/trace.h"

namespace pipesim {
namespace {

// The range of simulation speeds measured per core (docs/performance.md), for the time a refusal quotes.
constexpr double kSlowOpsPerCoreSecond = 1e6;
constexpr double kFastOpsPerCoreSecond = 1e7;

// Bytes per element of what grows with the run, beyond the records themselves: the engine's per-(stage,
// microbatch) state and the task graph's op index (5 words per cell), the edge list with its delays and the
// compressed graph built from it (about 6 words per edge), the plan's action lists, and the engine's inline
// critical path (an earliest finish and a predecessor per op).
constexpr double kCellBytes = 40 + 5 * 8;
constexpr double kCriticalPathBytesPerOp = sizeof(TimeNs) + sizeof(std::int32_t);
constexpr double kEdgeBytes = 6 * 8;
constexpr double kPlannedActionBytes = sizeof(Action);

}  // namespace

ResourceEstimate estimate_resources(const RunShape& shape) {
  const double stages = shape.stages;
  const double devices = shape.devices;
  const double microbatches =
      std::max(static_cast<double>(shape.microbatches) * shape.batches, shape.steady_microbatches);
  const double batches = shape.microbatches > 0 ? microbatches / shape.microbatches : shape.batches;
  ResourceEstimate e;
  // At most three ops (F, I, W) per stage and microbatch, and one U per stage and batch.
  e.ops = 3 * stages * microbatches + stages * batches;
  // An activation forward and a gradient backward across every stage boundary.
  e.transfers = 2 * (stages > 1 ? stages - 1 : 0) * microbatches;
  if (shape.task_graph) {
    // Up to two data dependencies and one same-device edge per op, plus per synchronized step an edge from
    // each device's last op before it to every stage's U: stages x devices per batch.
    e.graph_edges = 3 * e.ops + e.transfers + stages * devices * batches;
  }
  if (shape.records || shape.task_graph) {
    e.bytes =
        e.ops * (sizeof(OpRecord) + sizeof(MemorySample) + kPlannedActionBytes + kCriticalPathBytesPerOp) +
        e.transfers * sizeof(TransferRecord) + stages * microbatches * kCellBytes +
        e.graph_edges * kEdgeBytes;
  } else {
    // Streamed: the engine's state of the microbatches in flight and a batch's plan, not the run.
    const double batch = stages * static_cast<double>(shape.microbatches);
    e.bytes = batch * (kCellBytes + 3 * kPlannedActionBytes);
  }
  if (shape.link_comm) e.bytes += devices * devices * sizeof(std::int64_t);
  return e;
}

void check_total_ops(double ops, double runs, const std::string& what, const std::string& how_to_lower,
                     const Limits& limits) {
  if (ops <= limits.total_ops) return;
  throw ResourceLimitError(fmt::format(
      "{}: {:.0f} runs would simulate about {:.3g} ops in all (about {:.2g} to {:.2g} core-hours at {:.0f} "
      "to "
      "{:.0f} M ops/s per core), above the ceiling of {:.3g} ops; {}, or raise the ceiling with "
      "--max-total-ops",
      what, runs, ops, ops / kFastOpsPerCoreSecond / 3600, ops / kSlowOpsPerCoreSecond / 3600,
      kFastOpsPerCoreSecond / 1e6, kSlowOpsPerCoreSecond / 1e6, limits.total_ops, how_to_lower));
}

void check_resources(const RunShape& shape, const std::string& where, const Limits& limits) {
  const ResourceEstimate e = estimate_resources(shape);
  if (e.ops > limits.ops) {
    throw ResourceLimitError(fmt::format(
        "{}: N = {} devices, {} stages, m = {}: this run would simulate about {:.3g} ops ({:.3g} "
        "microbatches on "
        "every stage{}), above the ceiling of {:.3g} ops (10-20 s or more at 5-10 M ops/s); lower N, m or "
        "the "
        "schedule's window (e.g. PACI's accumulation), or raise the ceiling with --max-ops",
        where, shape.devices, shape.stages, shape.microbatches, e.ops,
        std::max(static_cast<double>(shape.microbatches) * shape.batches, shape.steady_microbatches),
        shape.steady_microbatches > static_cast<double>(shape.microbatches) * shape.batches
            ? ": what the steady-state search needs: warm-up, two windows and the drain"
            : "",
        limits.ops));
  }
  if (e.bytes <= limits.memory_bytes) return;
  throw ResourceLimitError(
      fmt::format("{}: N = {} devices, {} stages, m = {}, {} batches: this run would need about {:.3g} GB "
                  "({:.3g} ops, {:.3g} "
                  "transfers, {:.3g} task-graph edges), above the {:.3g} GB ceiling; lower N, m or the "
                  "batches, or raise the "
                  "ceiling with --max-memory-gb",
                  where, shape.devices, shape.stages, shape.microbatches, shape.batches, e.bytes / 1e9, e.ops,
                  e.transfers, e.graph_edges, limits.memory_bytes / 1e9));
}

}  // namespace pipesim
