#pragma once
// The Zero Bubble paper's automatic scheduler (Qi et al., arXiv 2401.10241, §3.2), behind zb-1p and zb-2p: a
// port of the authors' greedy (their `manual_order` heuristic) and a best-of search around it.
//
// The greedy places F, I and W stage by stage on a predicted timeline (the engine's semantics with each
// boundary's latency) under a per-stage activation-memory limit, one round per microbatch:
//   round 0   F0 on every stage; then, from the last stage up, as many more F as memory allows while they
//             end before the first I's gradient arrives (or, with allow_bubble_before_first_i, while one
//             more F does not end after it), each stage fewer than the one above unless it runs all m;
//             then I0 on every stage, bottom-up.
//   round k   one F per stage (top-down; a stage skips it when the stage below skips), then I_k on every
//             stage (bottom-up). Before each F or I: Ws while memory is over the limit; Ws while one ends
//             before the op's input arrives; one more W into a shorter gap when the gap would make this
//             stage's cumulative bubble the largest (always, with fill_short_gaps). Stage 1 runs all its Ws
//             before each I once its forwards are done. With prioritize_input_grad a stage >= 2 forwards
//             ahead of the next skips its F when the next stage's F+I would otherwise wait for it.
//   end       leftover Ws.
// Memory: an F holds M_B, its I releases M_B - M_W, its W the remaining M_W (docs/design.md §5).
//
// zb_search takes the greedy's lists for all 8 flag settings (under the limit and under N * M_B; a setting
// whose flags decided nothing in another setting's run is that run's lists) and adds the
// handcrafted ZB-H1 and ZB-H2 when they fit the limit and 1F1B's order (I then W at once) as a floor; every
// candidate runs on the engine as the final run will, and the best by ZbScore is kept, so the result is never
// worse than any of them.
#include <optional>
#include <string>
#include <vector>

#include "schedules/schedule.h"
#include "sim/metrics.h"

namespace pipesim {

// The greedy's three binary hyperparameters (the reference's names in brackets).
struct ZbFlags {
  // [allow_bubble_before_first_b] Warm-up: add an F while it starts before the first I's gradient arrives,
  // even if it ends after it; otherwise only while the stage would still be waiting.
  bool allow_bubble_before_first_i = false;
  // [prioritize_b] A stage >= 2 forwards ahead of the next skips its F when running it (and the Ws memory
  // needs first) would delay the next stage's F and I, unless idling instead would make its bubble the
  // largest.
  bool prioritize_input_grad = false;
  // [no_bubble_greedy] A W goes into a gap shorter than W even when leaving the gap idle would not make this
  // stage's cumulative bubble the largest.
  bool fill_short_gaps = false;

  // index()'s bits, the fields in declaration order.
  static constexpr int kAllowBubbleBit = 1;
  static constexpr int kPrioritizeBit = 2;
  static constexpr int kFillShortGapsBit = 4;
  static ZbFlags from_index(int index);
  int index() const;
  std::string describe() const;  // e.g. "greedy(allow_bubble,prioritize_i)" or "greedy()"
};

inline constexpr int kZbFlagCombinations = 8;

// What the heuristic knows about one stage (one stage per device).
struct ZbStage {
  std::vector<TimeNs> forward_ns;  // per microbatch of one batch
  std::vector<TimeNs> input_grad_ns;
  std::vector<TimeNs> weight_grad_ns;
  Bytes activation_bytes = 0;              // M_B: held from F's start until I's end
  Bytes weight_grad_activation_bytes = 0;  // M_W: the part of M_B held on from I's end until W's end
  Bytes limit_bytes = 0;                   // activation memory the stage may hold
  TimeNs forward_send_ns = 0;              // latency of the activation sent to the next stage
  TimeNs backward_send_ns = 0;             // latency of the gradient sent to the previous stage
};

struct ZbProblem {
  int microbatches = 0;
  std::vector<ZbStage> stages;
};

// Reads durations and memory from the cost model and each boundary's latency from a fresh comm model
// (spec.make_comm; none = no latency). Each stage's limit is memory_limit * N * M_B of that stage.
ZbProblem make_zb_problem(const PipelineSpec& spec, const CostModel& costs, double memory_limit);

struct ZbGreedyPlan {
  DeviceActionLists lists;  // one batch: microbatches 0..m-1, no U
  // The greedy's own objective on its predicted timeline: the longest stage span (first F's start to last
  // op's end), the Zero Bubble batch cost.
  TimeNs predicted_cost_ns = 0;
};

// One batch's lists for one setting of the flags; nullopt when memory forces a W that does not exist (the
// reference's "cannot fit memory").
std::optional<ZbGreedyPlan> zb_greedy_schedule(const ZbProblem& problem, const ZbFlags& flags);

// zb_greedy_schedule for every flag setting (by ZbFlags::index), running the greedy only for settings that
// could differ: each run records which flags changed one of its decisions, and a setting that differs from
// a run only in flags that decided nothing there takes the same decisions. `greedy_runs`: how many ran.
std::vector<std::optional<ZbGreedyPlan>> zb_greedy_all_flags(const ZbProblem& problem,
                                                             int* greedy_runs = nullptr);

// Peak activation bytes of one device's list run in order (F adds M_B; I and W release as above).
Bytes list_peak_activation_bytes(const ActionList& list, const ZbStage& stage);

// What the search minimises, measured on the engine exactly as the run reports it: the steady-state period
// (throughput), then the Zero Bubble batch cost (the reported ZB bubble rate's numerator plus fixed work),
// then the makespan.
struct ZbScore {
  TimeNs period_ns = 0;
  TimeNs zb_batch_cost_ns = 0;
  TimeNs makespan_ns = 0;
  static ZbScore of(const RunMetrics& metrics);
  bool operator<(const ZbScore& other) const;
};

// How a candidate's score is measured; all three give the same figures (tests hold them equal). kFastest
// times the repeated lists in one pass without a trace, kStaticPass records the static pass's trace,
// kEngine runs the event engine; each falls back to the next where it does not apply.
enum class ZbScoring { kFastest, kStaticPass, kEngine };

// One batch's lists repeated until steady with spec.sync, the same costs and comm, independent of
// spec.batches, scored as the reported run measures it.
ZbScore score_zb_candidate(const DeviceActionLists& one_batch, const PipelineSpec& spec,
                           const CostModel& costs, ZbScoring how = ZbScoring::kFastest);

struct ZbCandidate {
  std::string construction;  // "greedy(...)" (+ " under memory_limit=1"), "zb-h1", "zb-h2" or "1f1b"
  DeviceActionLists lists;   // one batch
  ZbScore score;
};

// Every candidate that fits the limit (distinct lists only), simulated on one fixed run (independent of
// spec.batches) with spec.sync, the same costs and comm; the best by ZbScore, ties to the earlier candidate
// (greedy under the limit by flag index, greedy under N * M_B, zb-h1, zb-h2, 1f1b).
// The greedy runs and the candidates' scoring spread over the free cores (base/task_pool.h); the result is
// the same however they were spread. `how` only changes how scores are measured (tests compare them).
ZbCandidate zb_search(const PipelineSpec& spec, const CostModel& costs, double memory_limit,
                      ZbScoring how = ZbScoring::kFastest);

}  // namespace pipesim
