#include "schedules/zb_greedy.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <functional>
#include <mutex>
#include <tuple>

#include "base/task_pool.h"
#include "schedules/zb_handcrafted.h"
#include "sim/duration_table.h"
#include "sim/engine/engine.h"
#include "sim/fast/repeated_list_timing.h"
#include "sim/fast/static_list_timing.h"
#include "sim/steady_state.h"

namespace pipesim {

ZbFlags ZbFlags::from_index(int index) {
  return {(index & kAllowBubbleBit) != 0, (index & kPrioritizeBit) != 0, (index & kFillShortGapsBit) != 0};
}

int ZbFlags::index() const {
  return (allow_bubble_before_first_i ? kAllowBubbleBit : 0) | (prioritize_input_grad ? kPrioritizeBit : 0) |
         (fill_short_gaps ? kFillShortGapsBit : 0);
}

std::string ZbFlags::describe() const {
  std::vector<std::string> set;
  if (allow_bubble_before_first_i) set.emplace_back("allow_bubble");
  if (prioritize_input_grad) set.emplace_back("prioritize_i");
  if (fill_short_gaps) set.emplace_back("fill_short_gaps");
  return fmt::format("greedy({})", fmt::join(set, ","));
}

ZbScore ZbScore::of(const RunMetrics& metrics) {
  return {metrics.period_ns, metrics.zb_batch_cost_ns, metrics.makespan_ns};
}

bool ZbScore::operator<(const ZbScore& other) const {
  return std::tie(period_ns, zb_batch_cost_ns, makespan_ns) <
         std::tie(other.period_ns, other.zb_batch_cost_ns, other.makespan_ns);
}

namespace {

// The run's comm model, new (comm models keep link state); none given means no latency.
std::unique_ptr<CommModel> fresh_comm(const PipelineSpec& spec) {
  if (spec.make_comm) return spec.make_comm();
  return std::make_unique<FixedLatencyComm>(std::vector<TimeNs>(spec.devices, 0));
}

}  // namespace

namespace {

// A limit beyond 2^62 bytes is no limit: clamped so that the conversion cannot overflow.
Bytes stage_limit_bytes(double memory_limit, int stages, Bytes activation_bytes) {
  return static_cast<Bytes>(
      std::min(std::floor(memory_limit * stages * static_cast<double>(activation_bytes)), 0x1p62));
}

// The same problem under another memory limit (the search runs the greedy under two).
ZbProblem with_memory_limit(ZbProblem problem, double memory_limit) {
  const int n = static_cast<int>(problem.stages.size());
  for (ZbStage& stage : problem.stages)
    stage.limit_bytes = stage_limit_bytes(memory_limit, n, stage.activation_bytes);
  return problem;
}

}  // namespace

ZbProblem make_zb_problem(const PipelineSpec& spec, const CostModel& costs, double memory_limit) {
  const int n = spec.devices;
  const int m = spec.microbatches;
  const std::unique_ptr<CommModel> comm = fresh_comm(spec);
  // Durations by kind and stage alone: one read per stage and kind, not per microbatch.
  const bool same_every_microbatch = costs.durations_by_kind_and_stage();
  ZbProblem problem;
  problem.microbatches = m;
  problem.stages.resize(n);
  for (int s = 0; s < n; ++s) {
    ZbStage& stage = problem.stages[s];
    if (same_every_microbatch) {
      stage.forward_ns.assign(m, costs.duration(forward(s, 0)));
      stage.input_grad_ns.assign(m, costs.duration(backward_input(s, 0)));
      stage.weight_grad_ns.assign(m, costs.duration(backward_weight(s, 0)));
    } else {
      for (int mb = 0; mb < m; ++mb) {
        stage.forward_ns.push_back(costs.duration(forward(s, mb)));
        stage.input_grad_ns.push_back(costs.duration(backward_input(s, mb)));
        stage.weight_grad_ns.push_back(costs.duration(backward_weight(s, mb)));
      }
    }
    stage.activation_bytes = costs.activation_bytes(s);
    stage.weight_grad_activation_bytes = costs.weight_grad_activation_bytes(s);
    stage.limit_bytes = stage_limit_bytes(memory_limit, n, stage.activation_bytes);
    // Each directed link is probed once, at time 0, on a fresh model: no queueing, just its latency.
    // The engine sends both directions of a boundary with the lower stage's transfer size.
    if (s + 1 < n) stage.forward_send_ns = comm->send(s, s + 1, costs.transfer_bytes(s), 0).arrival_ns;
    if (s > 0) stage.backward_send_ns = comm->send(s, s - 1, costs.transfer_bytes(s - 1), 0).arrival_ns;
  }
  return problem;
}

Bytes list_peak_activation_bytes(const ActionList& list, const ZbStage& stage) {
  Bytes held = 0;
  Bytes peak = 0;
  for (const Action& a : list) {
    if (a.kind == OpKind::F) held += stage.activation_bytes;
    if (a.kind == OpKind::I) held -= stage.activation_bytes - stage.weight_grad_activation_bytes;
    if (a.kind == OpKind::W) held -= stage.weight_grad_activation_bytes;
    peak = std::max(peak, held);
  }
  return peak;
}

namespace {

// A list that cannot be built: memory forces a W that does not exist, or an op's input is not placed.
struct Infeasible {};

// One run of the greedy for one flag setting. State per stage, as in the reference: ops placed of each
// kind, when the stage is free, activation memory held, and its cumulative bubble (idle time after its
// first F).
class GreedyBuilder {
 public:
  GreedyBuilder(const ZbProblem& problem, const ZbFlags& flags)
      : problem_(problem),
        flags_(flags),
        n_(static_cast<int>(problem.stages.size())),
        m_(problem.microbatches),
        stages_(n_),
        forward_end_ns_(static_cast<size_t>(n_) * m_, 0),
        input_grad_end_ns_(static_cast<size_t>(n_) * m_, 0) {
    for (StageState& state : stages_) state.list.reserve(3 * static_cast<size_t>(m_));
  }

  ZbGreedyPlan run() {
    first_round();
    for (int mb = 1; mb < m_; ++mb) {
      forward_round();
      input_grad_round(mb);
    }
    for (int s = 0; s < n_; ++s) {
      while (weight_grad_pending(s)) put(s, OpKind::W);
    }
    ZbGreedyPlan plan;
    for (int s = 0; s < n_; ++s) {
      plan.predicted_cost_ns =
          std::max(plan.predicted_cost_ns, stages_[s].free_ns - stages_[s].first_start_ns);
      plan.lists.push_back(std::move(stages_[s].list));
    }
    return plan;
  }

 private:
  struct StageState {
    int forwards = 0;  // ops placed of each kind = the next microbatch of that kind
    int input_grads = 0;
    int weight_grads = 0;
    TimeNs free_ns = 0;
    TimeNs first_start_ns = 0;
    Bytes held_bytes = 0;
    TimeNs bubble_ns = 0;
    ActionList list;
  };

  // Round 0: F0 everywhere, the warm-up forwards, I0 everywhere.
  void first_round() {
    for (int s = 0; s < n_; ++s) put(s, OpKind::F);
    const std::vector<int> extra = warm_up_forwards();
    for (int s = 0; s < n_; ++s) {
      for (int k = 0; k < extra[s]; ++k) put(s, OpKind::F);
    }
    for (int s = n_ - 1; s >= 0; --s) put(s, OpKind::I);
  }

  // Forwards each stage adds after F0, decided from the last stage up against when I0's gradient arrives
  // (estimated from F0's end, as the reference does), then trimmed top-down so that each stage runs fewer
  // than the one above unless it runs all m.
  std::vector<int> warm_up_forwards() {
    std::vector<int> extra(n_, 0);
    const ZbStage& last = problem_.stages[n_ - 1];
    TimeNs input_grad_end = forward_end(n_ - 1, 0) + last.input_grad_ns[0];
    for (int s = n_ - 2; s >= 0; --s) {
      const ZbStage& stage = problem_.stages[s];
      const TimeNs arrival = input_grad_end + problem_.stages[s + 1].backward_send_ns;
      Bytes held = stages_[s].held_bytes;
      TimeNs end = stages_[s].free_ns;
      for (int k = stages_[s].forwards; k < m_ && held + stage.activation_bytes <= stage.limit_bytes; ++k) {
        const bool late_allowing = end + stage.forward_ns[k] > arrival;
        const bool late_strict = end >= arrival;
        if (late_allowing != late_strict) decisive_ |= ZbFlags::kAllowBubbleBit;
        if (flags_.allow_bubble_before_first_i ? late_allowing : late_strict) break;
        held += stage.activation_bytes;
        end += stage.forward_ns[k];
        ++extra[s];
      }
      input_grad_end = std::max(end, arrival) + stage.input_grad_ns[0];
    }
    for (int s = 1; s < n_; ++s) {
      while (extra[s] > 0 && extra[s] >= extra[s - 1] && stages_[s].forwards + extra[s] < m_) --extra[s];
      // Not in the reference: a stage that runs all m may otherwise out-run the stage above (possible with
      // very uneven stages), and its list would deadlock.
      extra[s] = std::min(extra[s], extra[s - 1] + stages_[s - 1].forwards - stages_[s].forwards);
    }
    return extra;
  }

  // Rounds 1..m-1, first half: which stages run an F (a stage runs none when the stage below runs none),
  // then each of them, top-down, after the Ws memory and the gap before its input call for.
  void forward_round() {
    std::vector<bool> wants(n_, false);
    for (int s = 0; s < n_; ++s) wants[s] = wants_forward(s);
    for (int s = n_ - 2; s >= 0; --s) wants[s] = wants[s] && wants[s + 1];
    for (int s = 0; s < n_; ++s) {
      if (!wants[s]) continue;
      const ZbStage& stage = problem_.stages[s];
      weight_grads_for_memory(s, stage.activation_bytes);
      if (s > 0) {
        const int mb = stages_[s].forwards;
        if (stages_[s - 1].forwards <= mb) throw Infeasible{};
        weight_grads_into_gap(s, forward_end(s - 1, mb) + problem_.stages[s - 1].forward_send_ns);
      }
      put(s, OpKind::F);
    }
  }

  bool wants_forward(int s) {
    const StageState& state = stages_[s];
    if (state.forwards >= m_) return false;
    if (s + 1 >= n_ || state.forwards < stages_[s + 1].forwards + 2) return true;
    // Only here does prioritize_input_grad matter: decisive where the stage would skip its F.
    const bool runs = runs_forward_prioritizing_input_grads(s);
    if (!runs) decisive_ |= ZbFlags::kPrioritizeBit;
    return runs || !flags_.prioritize_input_grad;
  }

  bool runs_forward_prioritizing_input_grads(int s) const {
    const StageState& state = stages_[s];
    // Stage s is two forwards ahead: does its F (with the Ws memory needs first) delay the next stage?
    const ZbStage& stage = problem_.stages[s];
    const StageState& next = stages_[s + 1];
    const ZbStage& next_stage = problem_.stages[s + 1];
    const TimeNs next_plus_fw = next.free_ns + next_stage.forward_ns[next.forwards] +
                                next_stage.input_grad_ns[next.input_grads] + next_stage.backward_send_ns;
    if (state.free_ns >= next_plus_fw) return false;
    TimeNs weight_grads_ns = 0;
    Bytes held = state.held_bytes + stage.activation_bytes;
    for (int w = state.weight_grads; held > stage.limit_bytes && w < state.input_grads; ++w) {
      weight_grads_ns += stage.weight_grad_ns[w];
      held -= stage.weight_grad_activation_bytes;
    }
    if (state.free_ns + stage.forward_ns[state.forwards] + weight_grads_ns <= next_plus_fw) return true;
    // Skipping leaves the stage idle until next_plus_fw: only worth it while that keeps its bubble at most
    // the largest.
    return next_plus_fw - state.free_ns > largest_bubble_ns() - state.bubble_ns;
  }

  // Rounds 1..m-1, second half: I_mb on every stage, bottom-up.
  void input_grad_round(int mb) {
    for (int s = n_ - 1; s >= 0; --s) {
      const ZbStage& stage = problem_.stages[s];
      if (stages_[s].input_grads != mb || stages_[s].forwards <= mb) throw Infeasible{};
      weight_grads_for_memory(s, stage.weight_grad_activation_bytes - stage.activation_bytes);
      if (s + 1 < n_) {
        weight_grads_into_gap(s, input_grad_end(s + 1, mb) + problem_.stages[s + 1].backward_send_ns);
      }
      // Stage 1 with all forwards done has nothing else to fill its waits with.
      if (s == 0 && stages_[s].forwards == m_) {
        while (weight_grad_pending(s)) put(s, OpKind::W);
      }
      put(s, OpKind::I);
    }
  }

  // Ws until the next op's change of memory fits the limit.
  void weight_grads_for_memory(int s, Bytes change_bytes) {
    while (stages_[s].held_bytes + change_bytes > problem_.stages[s].limit_bytes) {
      if (!weight_grad_pending(s)) throw Infeasible{};
      put(s, OpKind::W);
    }
  }

  // Ws before an op whose input arrives at ready_ns: every W that ends by then, and one more into the
  // remaining shorter gap when idling it would make this stage's bubble the largest (always with
  // fill_short_gaps).
  void weight_grads_into_gap(int s, TimeNs ready_ns) {
    const ZbStage& stage = problem_.stages[s];
    while (weight_grad_pending(s) &&
           stages_[s].free_ns + stage.weight_grad_ns[stages_[s].weight_grads] <= ready_ns) {
      put(s, OpKind::W);
    }
    if (!weight_grad_pending(s) || stages_[s].free_ns >= ready_ns) return;
    const bool keeps_bubble_at_most_largest =
        ready_ns - stages_[s].free_ns <= largest_bubble_ns() - stages_[s].bubble_ns;
    if (keeps_bubble_at_most_largest) decisive_ |= ZbFlags::kFillShortGapsBit;
    if (!keeps_bubble_at_most_largest || flags_.fill_short_gaps) put(s, OpKind::W);
  }

  // Bubbles only grow (an op never starts before its stage is free): the largest is kept as they do.
  TimeNs largest_bubble_ns() const { return largest_bubble_ns_; }

  bool weight_grad_pending(int s) const { return stages_[s].weight_grads < stages_[s].input_grads; }

  TimeNs forward_end(int s, int mb) const { return forward_end_ns_[static_cast<size_t>(s) * m_ + mb]; }
  TimeNs input_grad_end(int s, int mb) const { return input_grad_end_ns_[static_cast<size_t>(s) * m_ + mb]; }

  // Appends the stage's next op of this kind: it ends when the stage is free and its input has arrived,
  // plus its duration; the wait counts as bubble once the stage has started.
  void put(int s, OpKind kind) {
    StageState& state = stages_[s];
    const ZbStage& stage = problem_.stages[s];
    const size_t slot = static_cast<size_t>(s) * m_;
    TimeNs ready = state.free_ns;
    TimeNs duration = 0;
    switch (kind) {
      case OpKind::F: {
        const int mb = state.forwards++;
        if (s > 0) ready = std::max(ready, forward_end(s - 1, mb) + problem_.stages[s - 1].forward_send_ns);
        duration = stage.forward_ns[mb];
        forward_end_ns_[slot + mb] = ready + duration;
        state.held_bytes += stage.activation_bytes;
        state.list.push_back(forward(s, mb));
        break;
      }
      case OpKind::I: {
        const int mb = state.input_grads++;
        if (s + 1 < n_) {
          ready = std::max(ready, input_grad_end(s + 1, mb) + problem_.stages[s + 1].backward_send_ns);
        }
        duration = stage.input_grad_ns[mb];
        input_grad_end_ns_[slot + mb] = ready + duration;
        state.held_bytes -= stage.activation_bytes - stage.weight_grad_activation_bytes;
        state.list.push_back(backward_input(s, mb));
        break;
      }
      default: {  // W
        const int mb = state.weight_grads++;
        duration = stage.weight_grad_ns[mb];
        state.held_bytes -= stage.weight_grad_activation_bytes;
        state.list.push_back(backward_weight(s, mb));
        break;
      }
    }
    if (state.list.size() == 1) {
      state.first_start_ns = ready;
    } else {
      state.bubble_ns += ready - state.free_ns;
      largest_bubble_ns_ = std::max(largest_bubble_ns_, state.bubble_ns);
    }
    state.free_ns = ready + duration;
  }

  const ZbProblem& problem_;
  const ZbFlags flags_;
  const int n_;
  const int m_;
  std::vector<StageState> stages_;
  std::vector<TimeNs> forward_end_ns_;  // [stage * m + microbatch], valid once placed
  std::vector<TimeNs> input_grad_end_ns_;
  TimeNs largest_bubble_ns_ = 0;  // over all stages

 public:
  // The flags (ZbFlags::index bits) whose value changed a decision of this run so far: a setting that
  // differs only in other flags takes every decision alike and builds the same lists (or fails alike).
  int decisive_flags() const { return decisive_; }

 private:
  int decisive_ = 0;
};

// The steady-state window of one batch's lists repeated, as the reported run finds it (sim/steady_state.h),
// independent of how many batches the user asked for. Noisy costs (`pipesim check`) never repeat: there one
// run with a fixed window, as the reported run does too.
RunLengthOptions candidate_run_length(const PipelineSpec& spec) {
  RunLengthOptions length;
  length.microbatches_per_batch = spec.microbatches;
  length.hint = {spec.microbatches, spec.microbatches, 0};
  length.exact_repeat = spec.exact_costs;
  return length;
}

// The engine's figures for the candidate, from its recorded trace.
ZbScore score_on_trace(const DeviceActionLists& one_batch, const PipelineSpec& spec, const CostModel& costs,
                       bool static_pass) {
  const PipelineLayout layout = PipelineLayout::linear(spec.devices);
  const SteadyRun run = simulate_steady_state(candidate_run_length(spec), [&](int batches) {
    PipelineSpec candidate = spec;
    candidate.batches = batches;
    DeviceActionLists lists = repeat_batches(layout, one_batch, candidate);
    std::unique_ptr<CommModel> comm = fresh_comm(candidate);
    // Static lists under a fixed latency: one dependency-ordered pass gives the engine's times
    // (sim/fast/static_list_timing.h; a test holds them equal), several times faster than the event loop.
    const auto* fixed = dynamic_cast<const FixedLatencyComm*>(comm.get());
    if (static_pass && fixed != nullptr) {
      if (std::optional<RunTrace> timed =
              time_static_lists({layout, lists, candidate.total_microbatches(),
                                 BackwardReads::kCurrentWeights, fixed->latency_ns()},
                                costs)) {
        return std::move(*timed);
      }
    }
    ExecutionPlan plan = plan_from_lists(layout, std::move(lists), candidate.total_microbatches());
    return simulate(plan, costs, *comm);
  });
  return ZbScore::of(compute_metrics(run.trace, {spec.microbatches, run.window}));
}

struct NotTimedInOnePass {};
struct CannotBeat {};

// A candidate whose period batch 0 already proved longer than the search's best so far: it cannot win
// (worse than every real score), and it is not timed further.
constexpr ZbScore kCannotWin{kNever, kNever, kNever};

// The same figures from the repeated lists' times alone (sim/fast/repeated_list_timing.h): no lists built, no
// trace; nullopt where the one pass does not apply (then the trace path runs, the engine if need be).
// With period_to_beat_ns, kCannotWin where the candidate's period is sure to be longer.
std::optional<ZbScore> score_on_repeated_times(const DeviceActionLists& one_batch, const PipelineSpec& spec,
                                               const CostModel& costs,
                                               const std::atomic<TimeNs>* period_to_beat_ns = nullptr) {
  const std::unique_ptr<CommModel> comm = fresh_comm(spec);
  const auto* fixed = dynamic_cast<const FixedLatencyComm*>(comm.get());
  if (fixed == nullptr) return std::nullopt;
  const PipelineLayout layout = PipelineLayout::linear(spec.devices);
  std::optional<RepeatedListTimes> times;
  try {
    const SteadyWindow steady = find_steady_window(
        candidate_run_length(spec), [&](const RunWindow& window) -> const SteadyStateProbe& {
          times = time_repeated_lists(
              {layout, one_batch, spec.microbatches, window.total_batches,
               spec.sync == OptimizerSync::kBarrier, fixed->latency_ns(), period_to_beat_ns},
              costs);
          if (!times) throw NotTimedInOnePass{};
          if (times->cannot_beat()) throw CannotBeat{};
          return *times;
        });
    const RepeatedListTimes::WindowFigures figures = times->figures(steady.window);
    return ZbScore{figures.period_ns, figures.zb_batch_cost_ns, figures.makespan_ns};
  } catch (const NotTimedInOnePass&) {
    return std::nullopt;
  } catch (const CannotBeat&) {
    return kCannotWin;
  }
}

bool fits(const DeviceActionLists& lists, const ZbProblem& problem) {
  for (size_t s = 0; s < lists.size(); ++s) {
    const ZbStage& stage = problem.stages[s];
    if (list_peak_activation_bytes(lists[s], stage) > stage.limit_bytes) return false;
  }
  return true;
}

}  // namespace

namespace {

// One greedy run and the flags that decided something in it.
struct GreedyRun {
  std::optional<ZbGreedyPlan> plan;
  int decisive_flags = 0;
};

GreedyRun run_greedy(const ZbProblem& problem, const ZbFlags& flags) {
  if (problem.stages.empty() || problem.microbatches < 1) return {};
  GreedyBuilder builder(problem, flags);
  try {
    std::optional<ZbGreedyPlan> plan = builder.run();
    return {std::move(plan), builder.decisive_flags()};
  } catch (const Infeasible&) {
    return {std::nullopt, builder.decisive_flags()};
  }
}

}  // namespace

std::optional<ZbGreedyPlan> zb_greedy_schedule(const ZbProblem& problem, const ZbFlags& flags) {
  return run_greedy(problem, flags).plan;
}

namespace {

// The 8 settings in turn, running the greedy only for settings that could differ: `setting(i, plan,
// same_as)` for each, with the run's plan (same_as = -1) or, for a setting that differs from an earlier
// run j only in flags that decided nothing there, no plan and same_as = j (its lists are j's).
int for_each_greedy_setting(
    const ZbProblem& problem,
    const std::function<void(int index, std::optional<ZbGreedyPlan>& plan, int same_as)>& setting) {
  std::vector<int> decisive(kZbFlagCombinations, 0);
  std::vector<int> ran;  // settings actually run, in order
  for (int i = 0; i < kZbFlagCombinations; ++i) {
    const auto same =
        std::find_if(ran.begin(), ran.end(), [&](int j) { return ((i ^ j) & decisive[j]) == 0; });
    std::optional<ZbGreedyPlan> plan;
    if (same != ran.end()) {
      setting(i, plan, *same);
      continue;
    }
    GreedyRun run = run_greedy(problem, ZbFlags::from_index(i));
    decisive[i] = run.decisive_flags;
    ran.push_back(i);
    setting(i, run.plan, -1);
  }
  return static_cast<int>(ran.size());
}

}  // namespace

std::vector<std::optional<ZbGreedyPlan>> zb_greedy_all_flags(const ZbProblem& problem, int* greedy_runs) {
  std::vector<std::optional<ZbGreedyPlan>> plans(kZbFlagCombinations);
  const int runs =
      for_each_greedy_setting(problem, [&](int index, std::optional<ZbGreedyPlan>& plan, int same_as) {
        plans[index] = same_as < 0 ? std::move(plan) : plans[same_as];
      });
  if (greedy_runs != nullptr) *greedy_runs = runs;
  return plans;
}

ZbScore score_zb_candidate(const DeviceActionLists& one_batch, const PipelineSpec& spec,
                           const CostModel& costs, ZbScoring how) {
  if (how == ZbScoring::kFastest) {
    if (std::optional<ZbScore> score = score_on_repeated_times(one_batch, spec, costs)) return *score;
  }
  return score_on_trace(one_batch, spec, costs, how != ZbScoring::kEngine);
}

namespace {

// Candidates with equal lists: scored once, for all of them.
struct CandidateGroup {
  const DeviceActionLists* lists = nullptr;  // the first member's
  bool has_floor = false;  // started by 1F1B's order: scored even if it did not fit (set before scoring)
  bool fits = false;
  bool scored = false;
  ZbScore score;
  std::exception_ptr error;  // rethrown where the old serial search would have met it first
};

// One search's candidates and their scoring, shared by the tasks that build and score them.
class ZbSearch {
 public:
  ZbSearch(const PipelineSpec& spec, const CostModel& costs, double memory_limit, ZbScoring how);
  ZbCandidate run();

 private:
  // Every candidate runs the same ops: durations that differ by microbatch are read once, for the first
  // window tried (by kind and stage, the one pass reads each once anyway).
  const CostModel& durations() const { return table_ ? static_cast<const CostModel&>(*table_) : costs_; }
  void score_group(CandidateGroup& group, bool even_if_unfit);
  void enter(size_t i);
  void add_greedy_tasks();
  void take_greedy_setting(size_t job, int index, std::optional<ZbGreedyPlan>& plan, int same_as);
  void add_handcrafted_tasks();
  void rethrow_construction_errors() const;
  ZbCandidate best_candidate();

  const PipelineSpec& spec_;
  const CostModel& costs_;
  const double memory_limit_;
  const ZbScoring how_;
  // The greedy under this limit and, when it is larger, under 1F1B's N * M_B too: a greedy heuristic can do
  // worse with more memory, and what zb-1p finds fits any larger limit.
  std::vector<double> limits_;
  std::vector<ZbProblem> limited_;  // the first: the limit every candidate must fit
  std::optional<DurationTable> table_;
  // Candidates in the order ties go by: the greedy under each limit by flag index, then zb-h1, zb-h2 and
  // 1F1B's order (the floor). Fixed slots: a group points into them while tasks run.
  size_t greedy_slots_ = 0;
  size_t floor_ = 0;
  std::vector<ZbCandidate> candidates_;
  std::vector<int> group_of_;  // -1: no such candidate (the greedy found no list)
  std::vector<CandidateGroup> groups_;
  std::vector<std::exception_ptr> greedy_errors_;
  // The handcrafted ones. 1F1B's order holds at most N * M_B, within any limit the schedules accept:
  // always a candidate.
  const std::vector<std::pair<const char*, DeviceActionLists (*)(int, int)>> handcrafted_{
      {"zb-h1", zb_h1_lists}, {"zb-h2", zb_h2_lists}, {"1f1b", one_f_one_b_split_lists}};
  std::vector<std::exception_ptr> handcrafted_errors_;
  std::mutex mutex_;
  TaskPool pool_;
  // The best period scored so far: a candidate whose batch 0 proves a longer one stops there (only the
  // fastest scoring; the others time every candidate in full, which the tests compare against).
  std::atomic<TimeNs> best_period_ns_{kNever};
};

ZbSearch::ZbSearch(const PipelineSpec& spec, const CostModel& costs, double memory_limit, ZbScoring how)
    : spec_(spec), costs_(costs), memory_limit_(memory_limit), how_(how) {
  limits_.push_back(memory_limit);
  if (memory_limit > 1.0) limits_.push_back(1.0);
  limited_.push_back(make_zb_problem(spec, costs, memory_limit));
  if (limits_.size() > 1) limited_.push_back(with_memory_limit(limited_.front(), limits_[1]));
  if (!costs.durations_by_kind_and_stage()) {
    table_.emplace(costs, spec.devices,
                   initial_window(candidate_run_length(spec)).total_batches * spec.microbatches);
  }
  greedy_slots_ = limits_.size() * kZbFlagCombinations;
  floor_ = greedy_slots_ + 2;
  candidates_.resize(greedy_slots_ + 3);
  group_of_.assign(candidates_.size(), -1);
  groups_.reserve(candidates_.size());  // no reallocation while tasks read their group
  greedy_errors_.resize(limits_.size());
  handcrafted_errors_.resize(handcrafted_.size());
}

void ZbSearch::score_group(CandidateGroup& group, bool even_if_unfit) {
  try {
    group.fits = fits(*group.lists, limited_.front());
    if (group.fits || even_if_unfit) {
      std::optional<ZbScore> score;
      if (how_ == ZbScoring::kFastest)
        score = score_on_repeated_times(*group.lists, spec_, durations(), &best_period_ns_);
      group.score = score ? *score : score_zb_candidate(*group.lists, spec_, durations(), how_);
      group.scored = true;
      TimeNs best = best_period_ns_.load();
      while (group.score.period_ns < best &&
             !best_period_ns_.compare_exchange_weak(best, group.score.period_ns)) {
      }
    }
  } catch (...) {
    group.error = std::current_exception();
  }
}

// Candidate i's lists are final: it joins the group of equal lists, or starts one and its scoring.
void ZbSearch::enter(size_t i) {
  const std::lock_guard<std::mutex> lock(mutex_);
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (*groups_[g].lists == candidates_[i].lists) {
      group_of_[i] = static_cast<int>(g);
      DeviceActionLists().swap(candidates_[i].lists);  // the group's first member holds them
      return;
    }
  }
  group_of_[i] = static_cast<int>(groups_.size());
  CandidateGroup& group = groups_.emplace_back();
  group.lists = &candidates_[i].lists;
  group.has_floor = i == floor_;
  pool_.add([this, &group] { score_group(group, group.has_floor); });
}

// The greedy runs first (the longest tasks); each plan is scored as soon as it is made.
void ZbSearch::add_greedy_tasks() {
  for (size_t job = 0; job < limits_.size(); ++job) {
    pool_.add([this, job] {
      try {
        for_each_greedy_setting(limited_[job],
                                [&](int index, std::optional<ZbGreedyPlan>& plan, int same_as) {
                                  take_greedy_setting(job, index, plan, same_as);
                                });
      } catch (...) {
        greedy_errors_[job] = std::current_exception();
      }
    });
  }
}

void ZbSearch::take_greedy_setting(size_t job, int index, std::optional<ZbGreedyPlan>& plan, int same_as) {
  const size_t slot = job * kZbFlagCombinations + static_cast<size_t>(index);
  ZbCandidate& candidate = candidates_[slot];
  const double limit = limits_[job];
  const std::string under = limit == memory_limit_ ? "" : fmt::format(" under memory_limit={:g}", limit);
  candidate.construction = ZbFlags::from_index(index).describe() + under;
  if (same_as >= 0) {  // the same lists as an earlier setting: its group, never the best before it
    const std::lock_guard<std::mutex> lock(mutex_);
    group_of_[slot] = group_of_[job * kZbFlagCombinations + static_cast<size_t>(same_as)];
    return;
  }
  if (!plan) return;
  candidate.lists = std::move(plan->lists);
  enter(slot);
}

void ZbSearch::add_handcrafted_tasks() {
  for (size_t k = 0; k < handcrafted_.size(); ++k) {
    pool_.add([this, k] {
      const size_t slot = greedy_slots_ + k;
      try {
        candidates_[slot] = {
            handcrafted_[k].first, handcrafted_[k].second(spec_.devices, spec_.microbatches), {}};
      } catch (...) {
        handcrafted_errors_[k] = std::current_exception();
        return;
      }
      enter(slot);
    });
  }
}

// As a serial search would fail: the greedy's failures first, then the handcrafted lists' in order (the
// first scored candidate's follow in best_candidate).
void ZbSearch::rethrow_construction_errors() const {
  for (const std::exception_ptr& error : greedy_errors_) {
    if (error) std::rethrow_exception(error);
  }
  for (const std::exception_ptr& error : handcrafted_errors_) {
    if (error) std::rethrow_exception(error);
  }
}

ZbCandidate ZbSearch::best_candidate() {
  // The floor may have joined a group whose lists did not fit, and whose scoring then skipped them.
  if (CandidateGroup& group = groups_[group_of_[floor_]]; !group.scored && !group.error) {
    score_group(group, true);
  }
  const ZbCandidate* best = nullptr;
  for (size_t i = 0; i < candidates_.size(); ++i) {
    if (group_of_[i] < 0) continue;
    const CandidateGroup& group = groups_[group_of_[i]];
    if (!group.fits && i != floor_) continue;
    if (group.error) std::rethrow_exception(group.error);
    candidates_[i].score = group.score;
    if (best == nullptr || candidates_[i].score < best->score) best = &candidates_[i];
  }
  // The lists of the group's first member: a later member's were freed.
  return {best->construction, *groups_[group_of_[best - candidates_.data()]].lists, best->score};
}

ZbCandidate ZbSearch::run() {
  add_greedy_tasks();
  add_handcrafted_tasks();
  pool_.run();
  rethrow_construction_errors();
  return best_candidate();
}

}  // namespace

ZbCandidate zb_search(const PipelineSpec& spec, const CostModel& costs, double memory_limit, ZbScoring how) {
  ZbSearch search(spec, costs, memory_limit, how);
  return search.run();
}

}  // namespace pipesim
