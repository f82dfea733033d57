#include "schedules/zb_greedy.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include "sim/engine.h"
#include "sim/errors.h"
#include "sim/metrics.h"

namespace pipesim {

ZbFlags ZbFlags::from_index(int index) {
  return {(index & 1) != 0, (index & 2) != 0, (index & 4) != 0};
}

int ZbFlags::index() const {
  return (fill_before_first_i ? 1 : 0) | (skip_forward_when_ahead ? 2 : 0) |
         (bubble_from_batch_start ? 4 : 0);
}

namespace {

// The run's comm model, new (comm models keep link state); none given means no latency.
std::unique_ptr<CommModel> fresh_comm(const PipelineSpec& spec) {
  if (spec.make_comm) return spec.make_comm();
  return std::make_unique<FixedLatencyComm>(std::vector<TimeNs>(spec.devices, 0));
}

}  // namespace

ZbProblem make_zb_problem(const PipelineSpec& spec, const CostModel& costs, double memory_limit) {
  const int n = spec.devices;
  const int m = spec.microbatches;
  const std::unique_ptr<CommModel> comm = fresh_comm(spec);
  ZbProblem problem;
  problem.microbatches = m;
  problem.stages.resize(n);
  for (int s = 0; s < n; ++s) {
    ZbStage& stage = problem.stages[s];
    for (int mb = 0; mb < m; ++mb) {
      stage.forward_ns.push_back(costs.duration(forward(s, mb)));
      stage.input_grad_ns.push_back(costs.duration(backward_input(s, mb)));
      stage.weight_grad_ns.push_back(costs.duration(backward_weight(s, mb)));
    }
    stage.activation_bytes = costs.activation_bytes(s);
    stage.weight_grad_activation_bytes = costs.weight_grad_activation_bytes(s);
    stage.limit_bytes =
        static_cast<Bytes>(std::floor(memory_limit * n * static_cast<double>(stage.activation_bytes)));
    // Each directed link is probed once, at time 0, on a fresh model: no queueing, just its latency.
    // The engine sends both directions of a boundary with the lower stage's transfer size.
    if (s + 1 < n) stage.forward_send_ns = comm->send(s, s + 1, costs.transfer_bytes(s), 0).arrival_ns;
    if (s > 0) stage.backward_send_ns = comm->send(s, s - 1, costs.transfer_bytes(s - 1), 0).arrival_ns;
  }
  return problem;
}

namespace {

// A stage's list so far and where it leaves the predicted timeline.
struct StageProgress {
  int forwards = 0;  // ops placed of each kind = the next microbatch of that kind
  int input_grads = 0;
  int weight_grads = 0;
  TimeNs free_ns = 0;  // when the stage finishes its last placed op
  TimeNs first_start_ns = 0;
  TimeNs work_left_ns = 0;  // F, I and W not placed yet
  Bytes held_bytes = 0;     // activation memory after its last placed op
  ActionList list;
};

class GreedyBuilder {
 public:
  GreedyBuilder(const ZbProblem& problem, const ZbFlags& flags)
      : problem_(problem),
        flags_(flags),
        n_(static_cast<int>(problem.stages.size())),
        m_(problem.microbatches),
        progress_(n_),
        forward_end_ns_(static_cast<size_t>(n_) * m_, 0),
        input_grad_end_ns_(static_cast<size_t>(n_) * m_, 0) {
    for (int s = 0; s < n_; ++s) {
      const ZbStage& stage = problem.stages[s];
      for (const auto* times : {&stage.forward_ns, &stage.input_grad_ns, &stage.weight_grad_ns}) {
        for (TimeNs t : *times) progress_[s].work_left_ns += t;
      }
    }
  }

  DeviceActionLists run() {
    place_warm_up(warm_up_forwards());
    while (!forwards_and_input_grads_placed()) {
      bool placed = input_grad_round();
      placed = forward_round() || placed;
      if (!placed) throw ScheduleError("zb greedy scheduler: no F or I can be placed (internal error)");
    }
    place_leftover_weight_grads();
    DeviceActionLists lists;
    for (StageProgress& p : progress_) lists.push_back(std::move(p.list));
    return lists;
  }

 private:
  // --- Warm-up ---------------------------------------------------------------------------------------

  // How many F each stage runs before its first I, decided from the last stage up. Stage i adds forwards
  // while they fit before the gradient of microbatch 0 arrives (with the flag: while the stage would
  // otherwise wait for it), and at least one more than stage i+1, within warm_up_caps().
  std::vector<int> warm_up_forwards() const {
    std::vector<int> counts(n_, 0);
    if (m_ == 0) return counts;
    const std::vector<std::vector<TimeNs>> ends = forward_only_end_ns();
    const std::vector<int> caps = warm_up_caps();
    counts[n_ - 1] = 1;
    TimeNs first_input_grad_end = ends[n_ - 1][0] + problem_.stages[n_ - 1].input_grad_ns[0];
    for (int s = n_ - 2; s >= 0; --s) {
      const TimeNs gradient_arrival = first_input_grad_end + problem_.stages[s + 1].backward_send_ns;
      int k = 1;
      while (k < caps[s]) {
        const bool fits_in_time =
            flags_.fill_before_first_i ? ends[s][k - 1] < gradient_arrival : ends[s][k] <= gradient_arrival;
        if (!fits_in_time && k > counts[s + 1]) break;
        ++k;
      }
      counts[s] = k;
      first_input_grad_end = std::max(ends[s][k - 1], gradient_arrival) + problem_.stages[s].input_grad_ns[0];
    }
    return counts;
  }

  // End of F(s, k) if every stage ran only forwards: the warm-up timeline.
  std::vector<std::vector<TimeNs>> forward_only_end_ns() const {
    std::vector<std::vector<TimeNs>> ends(n_, std::vector<TimeNs>(m_, 0));
    for (int s = 0; s < n_; ++s) {
      TimeNs free_ns = 0;
      for (int k = 0; k < m_; ++k) {
        const TimeNs ready = s == 0 ? 0 : ends[s - 1][k] + problem_.stages[s - 1].forward_send_ns;
        free_ns = std::max(free_ns, ready) + problem_.stages[s].forward_ns[k];
        ends[s][k] = free_ns;
      }
    }
    return ends;
  }

  // The most warm-up forwards each stage may run: what its memory holds, at most m, and one fewer than the
  // stage above may run (so that stage i can stay one F ahead of stage i+1). At least one.
  std::vector<int> warm_up_caps() const {
    std::vector<int> caps(n_);
    for (int s = 0; s < n_; ++s) {
      const ZbStage& stage = problem_.stages[s];
      int cap = m_;
      if (stage.activation_bytes > 0) {
        cap = static_cast<int>(std::min<Bytes>(cap, stage.limit_bytes / stage.activation_bytes));
      }
      if (s > 0) cap = std::min(cap, caps[s - 1] - 1);
      caps[s] = std::max(cap, 1);
    }
    return caps;
  }

  // Top-down, so that every F's input is placed before it; a stage never gets more than its upstream.
  void place_warm_up(const std::vector<int>& counts) {
    for (int s = 0; s < n_; ++s) {
      const int upstream = s == 0 ? m_ : progress_[s - 1].forwards;
      for (int k = 0; k < std::min(counts[s], upstream); ++k) place(s, OpKind::F, forward_ready_ns(s));
    }
  }

  // --- Steady state: one round = one I per stage (bottom-up), then one F per stage (top-down) -------

  bool input_grad_round() {
    bool placed = false;
    for (int s = n_ - 1; s >= 0; --s) {
      if (!input_grad_placeable(s)) continue;
      const TimeNs ready = input_grad_ready_ns(s);
      weight_grads_before(s, ready, 0);
      place(s, OpKind::I, ready);
      placed = true;
    }
    return placed;
  }

  bool forward_round() {
    bool placed = false;
    for (int s = 0; s < n_; ++s) {
      if (!forward_placeable(s) || skips_forward(s)) continue;
      const TimeNs ready = forward_ready_ns(s);
      const ZbStage& stage = problem_.stages[s];
      weight_grads_before(s, ready, stage.activation_bytes);
      if (progress_[s].held_bytes + stage.activation_bytes > stage.limit_bytes) continue;  // wait for an I
      place(s, OpKind::F, ready);
      placed = true;
    }
    return placed;
  }

  // A stage two or more forwards ahead of the next may run a pending W instead of its F.
  bool skips_forward(int s) const {
    return flags_.skip_forward_when_ahead && s + 1 < n_ &&
           progress_[s].forwards >= progress_[s + 1].forwards + 2 && weight_grad_pending(s);
  }

  // --- W insertion -------------------------------------------------------------------------------------

  // Runs pending Ws before an op that becomes ready at ready_ns and needs needed_bytes more memory.
  void weight_grads_before(int s, TimeNs ready_ns, Bytes needed_bytes) {
    const ZbStage& stage = problem_.stages[s];
    while (weight_grad_pending(s)) {
      const StageProgress& p = progress_[s];
      const TimeNs gap = ready_ns - p.free_ns;
      const bool over_memory = p.held_bytes + needed_bytes > stage.limit_bytes;
      const bool long_gap = gap >= stage.weight_grad_ns[p.weight_grads];
      const bool bubble_raising_gap = gap > 0 && cumulative_ns(s) + gap > largest_cumulative_ns();
      if (!over_memory && !long_gap && !bubble_raising_gap) return;
      place(s, OpKind::W, input_grad_end(s, p.weight_grads));
    }
  }

  void place_leftover_weight_grads() {
    for (int s = 0; s < n_; ++s) {
      while (weight_grad_pending(s)) place(s, OpKind::W, input_grad_end(s, progress_[s].weight_grads));
    }
  }

  // A stage's cumulative bubble plus all its work: where it would end (or how long it would run) if it idled
  // no more. With equal stages this ranks the stages exactly as the paper's cumulative bubble does; with
  // unequal ones it also weighs how much work each still has to fit in.
  TimeNs cumulative_ns(int s) const {
    const StageProgress& p = progress_[s];
    const TimeNs projected_end = p.free_ns + p.work_left_ns;
    return flags_.bubble_from_batch_start ? projected_end : projected_end - p.first_start_ns;
  }
  TimeNs largest_cumulative_ns() const {
    TimeNs largest = 0;
    for (int s = 0; s < n_; ++s) largest = std::max(largest, cumulative_ns(s));
    return largest;
  }

  // --- Dependencies on the predicted timeline ------------------------------------------------------------

  // Stage s's next F needs its input, and stage s-1 keeps one F ahead until it has run them all.
  bool forward_placeable(int s) const {
    const int mb = progress_[s].forwards;
    if (mb == m_) return false;
    if (s == 0) return true;
    const int upstream = progress_[s - 1].forwards;
    return upstream > mb + 1 || upstream == m_;
  }
  bool input_grad_placeable(int s) const {
    const int mb = progress_[s].input_grads;
    return mb < progress_[s].forwards && (s == n_ - 1 || progress_[s + 1].input_grads > mb);
  }
  bool weight_grad_pending(int s) const { return progress_[s].weight_grads < progress_[s].input_grads; }

  TimeNs forward_ready_ns(int s) const {
    if (s == 0) return 0;
    return forward_end(s - 1, progress_[s].forwards) + problem_.stages[s - 1].forward_send_ns;
  }
  TimeNs input_grad_ready_ns(int s) const {
    const int mb = progress_[s].input_grads;
    if (s == n_ - 1) return forward_end(s, mb);
    return std::max(forward_end(s, mb), input_grad_end(s + 1, mb) + problem_.stages[s + 1].backward_send_ns);
  }

  TimeNs forward_end(int s, int mb) const { return forward_end_ns_[static_cast<size_t>(s) * m_ + mb]; }
  TimeNs input_grad_end(int s, int mb) const { return input_grad_end_ns_[static_cast<size_t>(s) * m_ + mb]; }

  // Appends the stage's next op of this kind; it starts when both the stage and its inputs are ready.
  void place(int s, OpKind kind, TimeNs ready_ns) {
    StageProgress& p = progress_[s];
    const ZbStage& stage = problem_.stages[s];
    const TimeNs start = std::max(p.free_ns, ready_ns);
    if (p.list.empty()) p.first_start_ns = start;
    const size_t slot = static_cast<size_t>(s) * m_;
    TimeNs duration = 0;
    switch (kind) {
      case OpKind::F: {
        const int mb = p.forwards++;
        duration = stage.forward_ns[mb];
        forward_end_ns_[slot + mb] = start + duration;
        p.held_bytes += stage.activation_bytes;
        p.list.push_back(forward(s, mb));
        break;
      }
      case OpKind::I: {
        const int mb = p.input_grads++;
        duration = stage.input_grad_ns[mb];
        input_grad_end_ns_[slot + mb] = start + duration;
        p.held_bytes -= stage.activation_bytes - stage.weight_grad_activation_bytes;
        p.list.push_back(backward_input(s, mb));
        break;
      }
      default: {  // W
        const int mb = p.weight_grads++;
        duration = stage.weight_grad_ns[mb];
        p.held_bytes -= stage.weight_grad_activation_bytes;
        p.list.push_back(backward_weight(s, mb));
        break;
      }
    }
    p.free_ns = start + duration;
    p.work_left_ns -= duration;
  }

  bool forwards_and_input_grads_placed() const {
    return std::all_of(progress_.begin(), progress_.end(),
                       [&](const StageProgress& p) { return p.forwards == m_ && p.input_grads == m_; });
  }

  const ZbProblem& problem_;
  const ZbFlags flags_;
  const int n_;
  const int m_;
  std::vector<StageProgress> progress_;
  std::vector<TimeNs> forward_end_ns_;  // [stage * m + microbatch], valid once placed
  std::vector<TimeNs> input_grad_end_ns_;
};

// Period and one batch's span of one batch's lists repeated on the engine over a fixed run (one batch of
// warm-up, a window of two, one more: sim/steady_state.h's fixed window), independent of how many batches
// the user asked for. One run, not the doubling search: the costs may be noisy (`pipesim check`), and the
// period only ranks the candidates.
std::pair<TimeNs, TimeNs> simulate_candidate(const DeviceActionLists& one_batch, const PipelineSpec& spec,
                                             const CostModel& costs) {
  const PipelineLayout layout = PipelineLayout::linear(spec.devices);
  RunLengthOptions length;
  length.microbatches_per_batch = spec.microbatches;
  length.hint = {spec.microbatches, spec.microbatches, 0};
  length.exact_repeat = false;
  const SteadyRun run = simulate_steady_state(length, [&](int batches) {
    PipelineSpec candidate = spec;
    candidate.batches = batches;
    ExecutionPlan plan =
        plan_from_lists(layout, repeat_batches(layout, one_batch, candidate), candidate.total_microbatches());
    return simulate(plan, costs, *fresh_comm(candidate));
  });
  const RunMetrics metrics = compute_metrics(run.trace, {spec.microbatches, run.window});
  return {metrics.period_ns, metrics.zb_batch_cost_ns};
}

}  // namespace

DeviceActionLists zb_greedy_schedule(const ZbProblem& problem, const ZbFlags& flags) {
  return GreedyBuilder(problem, flags).run();
}

ZbCandidate zb_search(const PipelineSpec& spec, const CostModel& costs, double memory_limit) {
  const ZbProblem problem = make_zb_problem(spec, costs, memory_limit);
  std::vector<DeviceActionLists> tried;
  std::optional<ZbCandidate> best;
  for (int index = 0; index < kZbFlagCombinations; ++index) {
    const ZbFlags flags = ZbFlags::from_index(index);
    DeviceActionLists lists = zb_greedy_schedule(problem, flags);
    // Different flags often give the same lists; those simulate the same, and the lower index wins ties.
    if (std::find(tried.begin(), tried.end(), lists) != tried.end()) continue;
    tried.push_back(lists);
    ZbCandidate candidate{flags, std::move(lists)};
    std::tie(candidate.period_ns, candidate.batch_cost_ns) = simulate_candidate(candidate.lists, spec, costs);
    if (!best || std::tie(candidate.period_ns, candidate.batch_cost_ns) <
                     std::tie(best->period_ns, best->batch_cost_ns)) {
      best = std::move(candidate);
    }
  }
  return *best;
}

}  // namespace pipesim
