#pragma once
// A static schedule's run streamed to an observer without the event loop: the repeated lists' times come
// from one dependency-ordered pass (sim/fast/repeated_list_timing.h), and what the engine would report (op
// starts, memory changes, transfers, completed gradients, retired versions) is replayed from them in time
// order, every op end of an instant before its starts, as the engine handles an instant. The run's summary
// (makespan, critical path, peaks, microbatches held) is the engine's: a test holds every streamed figure
// equal to the engine's on random runs of every static schedule.
//
// It applies where those times are exact and the engine would report nothing else: the plan's policies run
// ExecutionPlan::repeated (static schedules), one pipeline, the fixed-latency comm model without blocking,
// the current weights read by every op, no fused ops, and F, B, I and W of positive length (one instant's
// memory changes then come in the engine's order), with at most 2^17 ops a batch (beyond, the pass's ~57
// bytes per op of a batch outweigh its speed: the engine's memory is flat in m). Elsewhere, or where the
// lists break a rule or deadlock, it returns nullopt and the caller runs the engine, which also names the
// error.
#include <optional>

#include "sim/comm_model.h"
#include "sim/cost_model.h"
#include "sim/policy.h"
#include "sim/run_observer.h"
#include "sim/trace.h"

namespace pipesim {

std::optional<RunTrace> stream_repeated_lists(const ExecutionPlan& plan, const CostModel& costs,
                                              const CommModel& comm, RunObserver& observer);

}  // namespace pipesim
