#include "plan/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "api/resolve.h"
#include "api/run_batch.h"
#include "api/schedule_selection.h"
#include "api/simulation.h"
#include "base/errors.h"
#include "base/task_pool.h"
#include "cost_models/transformer/shapes_flops.h"
#include "distributed/work_farm.h"
#include "plan/plan_bounds.h"
#include "report/progress_bar.h"
#include "schedules/registry.h"
#include "sim/resource_estimate.h"

namespace pipesim {
namespace {

// Candidates simulated together before the thresholds are updated: fixed, so the search is the same for any
// number of threads.
constexpr size_t kWave = 16;

// Calls job(i) for i in [0, count) on `threads` workers; rethrows the failure of the lowest index.
void for_each_index(size_t threads, size_t count, const std::function<void(size_t)>& job) {
  std::atomic<size_t> next{0};
  std::mutex mutex;
  std::optional<size_t> failed_at;
  std::exception_ptr failure;
  run_workers(std::min(threads, std::max<size_t>(count, 1)), [&] {
    for (size_t i = next++; i < count; i = next++) {
      try {
        job(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (!failed_at || i < *failed_at) {
          failed_at = i;
          failure = std::current_exception();
        }
      }
    }
  });
  if (failure) std::rethrow_exception(failure);
}

struct Evaluated {
  double samples_per_s = 0;  // one replica's
  double peak_bytes = 0;
};

// Better first: more samples per second, then less memory (the same speed with more headroom), then the
// earlier candidate.
bool ranks_before(const PlanRow& a, size_t ia, const PlanRow& b, size_t ib) {
  if (a.job_samples_per_s != b.job_samples_per_s) return a.job_samples_per_s > b.job_samples_per_s;
  if (a.peak_bytes != b.peak_bytes) return a.peak_bytes < b.peak_bytes;
  return ia < ib;
}

// The configuration apart from its memory settings (recomputation, ZeRO), which a table shows once: at the
// setting that ranks best (and, at p = 1, apart from the synchronous schedule, which then changes nothing).
std::string shape_key(const PlanRow& r) {
  const PlanCandidate& c = r.candidate;
  // Without a pipeline every synchronous schedule is the same gradient accumulation: one row for them all.
  const std::string schedule = c.pipeline == 1 && r.synchronous ? "(no pipeline)" : r.label;
  return fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", schedule, c.tensor, c.context, c.pipeline, c.data, c.expert,
                     c.microbatch_size, c.microbatches);
}

// The best `keep` fitting rows of a kind among `indices`, one per shape, best first.
std::vector<size_t> best_distinct(const std::vector<PlanRow>& rows, std::vector<size_t> indices,
                                  bool synchronous, int keep) {
  std::erase_if(indices, [&](size_t i) {
    const PlanRow& r = rows[i];
    return !(r.fate == CandidateFate::kSimulated || r.fate == CandidateFate::kReused) ||
           r.synchronous != synchronous;
  });
  std::sort(indices.begin(), indices.end(),
            [&](size_t a, size_t b) { return ranks_before(rows[a], a, rows[b], b); });
  std::vector<size_t> out;
  std::set<std::string> shapes;
  for (size_t i : indices) {
    if (static_cast<int>(out.size()) == keep) break;
    if (shapes.insert(shape_key(rows[i])).second) out.push_back(i);
  }
  return out;
}

// One candidate's simulation, as a serving rank sends it back.
struct SimulationOutcome {
  CandidateFate fate = CandidateFate::kSimulated;
  std::string reason;
  double samples_per_s = 0;  // one replica's
  double peak_bytes = 0;
};

SimulationOutcome simulate_candidate(const Scenario& scenario, const PlanCandidate& candidate,
                                     bool sequence_parallel, const Limits& limits) {
  const Scenario s = scenario_for_candidate(scenario, candidate, sequence_parallel);
  SimulationOptions sim;
  sim.keep_trace = false;
  sim.limits = limits;
  SimulationOutcome out;
  try {
    const SimulationResult r = simulate_schedule(s, candidate.schedule, sim);
    out.samples_per_s = r.metrics.throughput_samples_per_s;
    out.peak_bytes = static_cast<double>(r.memory.peak_bytes());
  } catch (const InputError& e) {
    out = {CandidateFate::kNotRunnable, one_line_reason(e.what()), 0, 0};
  } catch (const DeadlockError& e) {
    out = {CandidateFate::kNotRunnable, one_line_reason(e.what()), 0, 0};
  } catch (const ScheduleError& e) {
    // Not the search's to hide, nor to end: listed with its reason.
    out = {CandidateFate::kFailed, one_line_reason(e.what()), 0, 0};
  }
  return out;
}

// "fate samples peak reason" with the doubles in hex, so a result that crossed ranks is bit-identical.
std::string encode(const SimulationOutcome& o) {
  return fmt::format("{} {:a} {:a} {}", static_cast<int>(o.fate), o.samples_per_s, o.peak_bytes, o.reason);
}

SimulationOutcome decode(const std::string& text) {
  SimulationOutcome o;
  std::istringstream in(text);
  int fate = 0;
  std::string samples, peak;
  in >> fate >> samples >> peak;
  if (!in) throw ScheduleError(fmt::format("plan: a malformed result from a serving rank: '{}'", text));
  o.fate = static_cast<CandidateFate>(fate);
  o.samples_per_s = std::strtod(samples.c_str(), nullptr);
  o.peak_bytes = std::strtod(peak.c_str(), nullptr);
  const auto space = text.find(' ', text.find(' ', text.find(' ') + 1) + 1);
  if (space != std::string::npos) o.reason = text.substr(space + 1);
  return o;
}

// Rank 0's search: bounds every candidate from its own resolved run, then simulates, wave by wave and best
// throughput bound first, those whose bound may still beat the K-th best kept of their kind.
class PlanSearch {
 public:
  PlanSearch(const Scenario& scenario, const PlanOptions& options, const PlanSpaceOptions& space,
             const std::vector<PlanCandidate>& candidates, const FarmRun& farm, PlanResult& result)
      : scenario_(scenario),
        options_(options),
        space_(space),
        candidates_(candidates),
        farm_(farm),
        result_(result),
        setup_(*scenario.transformer),
        n_(candidates.size()),
        threads_(options.mpi ? 1 : worker_count(options.jobs, n_, "-j")) {
    result_.rows.resize(n_);
    fingerprints_.resize(n_);
    estimated_ops_of_.assign(n_, 0);
  }

  // Fills the result's rows and best lists.
  void run() {
    bound_candidates();
    const std::vector<size_t> order = runnable_by_bound();
    check_work_ceiling(order);
    done_ += n_ - order.size();
    bar_.update(done_);
    batch_ = result_.global_batch;
    keep_ = std::max(1, options_.top);
    for (size_t begin = 0; begin < order.size(); begin += kWave) {
      run_wave(order, begin, std::min(order.size(), begin + kWave));
    }
    result_.best_sync = best_distinct(result_.rows, evaluated_, true, keep_);
    result_.best_async = best_distinct(result_.rows, evaluated_, false, keep_);
  }

 private:
  void run_simulations(const std::vector<size_t>& to_run,
                       const std::function<void(size_t, const SimulationOutcome&)>& on_outcome);
  void bound_candidates();
  void bound_candidate(size_t i);
  std::vector<size_t> runnable_by_bound() const;
  void check_work_ceiling(const std::vector<size_t>& order) const;
  double threshold(bool synchronous) const;
  void run_wave(const std::vector<size_t>& order, size_t begin, size_t end);
  void sort_wave(const std::vector<size_t>& order, size_t begin, size_t end, std::vector<size_t>& to_run,
                 std::vector<size_t>& to_reuse);
  void fill(size_t i, CandidateFate fate);

  const Scenario& scenario_;
  const PlanOptions& options_;
  const PlanSpaceOptions& space_;
  const std::vector<PlanCandidate>& candidates_;
  const FarmRun& farm_;
  PlanResult& result_;
  const TransformerSetup& setup_;
  const size_t n_;
  const size_t threads_;
  std::vector<std::string> fingerprints_;
  std::vector<double> estimated_ops_of_;  // what each candidate's simulation would take
  ProgressBar bar_{2 * n_, "candidates bounded or run", options_.progress};
  std::atomic<size_t> done_{0};
  double batch_ = 0;
  int keep_ = 1;
  std::map<std::string, Evaluated> simulated_;  // by fingerprint
  std::vector<size_t> evaluated_;               // rows with figures so far
};

// Simulates the candidates at `to_run`, on threads or, with --mpi, on the serving ranks (the most
// microbatches x stages first); on_outcome(k, ...) for to_run[k].
void PlanSearch::run_simulations(const std::vector<size_t>& to_run,
                                 const std::function<void(size_t, const SimulationOutcome&)>& on_outcome) {
  if (options_.mpi) {
    std::map<size_t, size_t> position;
    for (size_t k = 0; k < to_run.size(); ++k) position[to_run[k]] = k;
    std::vector<size_t> order = to_run;
    // In int64: m up to 2^30 times p can wrap an int.
    const auto size_of = [&](size_t i) {
      return static_cast<std::int64_t>(candidates_[i].microbatches) * candidates_[i].pipeline;
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return size_of(a) > size_of(b); });
    farm_(order, [&](size_t i, const std::string& bytes) { on_outcome(position.at(i), decode(bytes)); });
    return;
  }
  for_each_index(threads_, to_run.size(), [&](size_t k) {
    on_outcome(
        k, simulate_candidate(scenario_, candidates_[to_run[k]], space_.sequence_parallel, options_.limits));
  });
}

// Bounds, from each candidate's own resolved run.
void PlanSearch::bound_candidates() {
  for_each_index(threads_, n_, [&](size_t i) {
    bound_candidate(i);
    bar_.update(++done_);
  });
}

void PlanSearch::bound_candidate(size_t i) {
  PlanRow& row = result_.rows[i];
  row.candidate = candidates_[i];
  const Scenario s = scenario_for_candidate(scenario_, candidates_[i], space_.sequence_parallel);
  try {
    ResolveOptions checks;
    checks.task_graph = false;
    checks.records = false;
    checks.limits = options_.limits;
    const ResolvedRun run = resolve(s, candidates_[i].schedule, checks);
    const CandidateBounds bounds = candidate_bounds(run);
    row.label = run.schedule->label();
    row.synchronous = bounds.synchronous;
    row.busiest_work_s = bounds.busiest_work_s;
    row.min_peak_bytes = bounds.min_peak_bytes;
    row.fate = bounds.min_peak_bytes > result_.capacity_bytes ? CandidateFate::kOverMemoryBound
                                                              : CandidateFate::kSimulated;
    if (row.fate == CandidateFate::kSimulated) {
      fingerprints_[i] = simulation_fingerprint(run);
      estimated_ops_of_[i] = estimated_ops(run, checks);
    }
  } catch (const InputError& e) {
    row.fate = CandidateFate::kNotRunnable;
    row.label = make_schedule(candidates_[i].schedule.name, candidates_[i].schedule.params)->label();
    row.reason = one_line_reason(e.what());
  }
}

// The candidates that may run, best throughput bound first.
std::vector<size_t> PlanSearch::runnable_by_bound() const {
  std::vector<size_t> order;
  for (size_t i = 0; i < n_; ++i) {
    if (result_.rows[i].fate == CandidateFate::kSimulated) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return result_.rows[a].busiest_work_s < result_.rows[b].busiest_work_s;
  });
  return order;
}

// The most the search can simulate, before the first simulation: every candidate under its memory bound,
// once per fingerprint (pruning only lowers it), under the ceiling on a command's work (as sweep, check).
void PlanSearch::check_work_ceiling(const std::vector<size_t>& order) const {
  std::set<std::string> counted;
  double ops = 0;
  for (size_t i : order) {
    if (counted.insert(fingerprints_[i]).second) ops += estimated_ops_of_[i];
  }
  check_total_ops(
      ops, static_cast<double>(counted.size()),
      "plan (at most: the candidates under their memory bound, before pruning)",
      scenario_.transformer && scenario_.transformer->model.moe.any()
          ? "lower --global-batch or narrow the search (--schedules, --pipeline, --microbatch-sizes, "
            "--expert)"
          : "lower --global-batch or narrow the search (--schedules, --pipeline, --microbatch-sizes)",
      options_.limits);
}

// The K-th best throughput of each kind so far, one per shape (0 until K are kept).
double PlanSearch::threshold(bool synchronous) const {
  const std::vector<size_t> best = best_distinct(result_.rows, evaluated_, synchronous, keep_);
  return static_cast<int>(best.size()) < keep_ ? 0.0 : result_.rows[best.back()].job_samples_per_s;
}

// The wave order[begin, end): prunes by bound, simulates the first of each fingerprint, reuses the rest.
void PlanSearch::run_wave(const std::vector<size_t>& order, size_t begin, size_t end) {
  std::vector<size_t> to_run;  // first of each fingerprint in this wave
  std::vector<size_t> to_reuse;
  sort_wave(order, begin, end, to_run, to_reuse);
  std::vector<Evaluated> figures(to_run.size());
  run_simulations(to_run, [&](size_t k, const SimulationOutcome& outcome) {
    PlanRow& row = result_.rows[to_run[k]];
    row.fate = outcome.fate;
    row.reason = outcome.reason;
    figures[k] = {outcome.samples_per_s, outcome.peak_bytes};
    bar_.update(++done_);
  });
  for (size_t k = 0; k < to_run.size(); ++k) {
    if (result_.rows[to_run[k]].fate == CandidateFate::kSimulated)
      simulated_[fingerprints_[to_run[k]]] = figures[k];
  }
  for (size_t i : to_run) {
    if (result_.rows[i].fate == CandidateFate::kSimulated) {
      fill(i, CandidateFate::kSimulated);
      evaluated_.push_back(i);
    }
  }
  for (size_t i : to_reuse) {
    fill(i, CandidateFate::kReused);
    evaluated_.push_back(i);
    ++done_;
  }
  bar_.update(done_);
}

void PlanSearch::sort_wave(const std::vector<size_t>& order, size_t begin, size_t end,
                           std::vector<size_t>& to_run, std::vector<size_t>& to_reuse) {
  const double sync_threshold = threshold(true);
  const double async_threshold = threshold(false);
  for (size_t k = begin; k < end; ++k) {
    PlanRow& row = result_.rows[order[k]];
    // The job's samples per second can be at most the global batch over the busiest GPU's work (to within
    // the nanoseconds fused slots round: the margin).
    const double bound = batch_ / row.busiest_work_s;
    const double best_kept = row.synchronous ? sync_threshold : async_threshold;
    if (bound < best_kept * (1 - 1e-5)) {
      row.fate = CandidateFate::kPrunedByBound;
      ++done_;
      continue;
    }
    const std::string& key = fingerprints_[order[k]];
    const bool first_in_wave =
        std::none_of(to_run.begin(), to_run.end(), [&](size_t j) { return fingerprints_[j] == key; });
    if (simulated_.count(key) || !first_in_wave) {
      to_reuse.push_back(order[k]);
    } else {
      to_run.push_back(order[k]);
    }
  }
}

// Row i's figures from its fingerprint's simulation.
void PlanSearch::fill(size_t i, CandidateFate fate) {
  PlanRow& row = result_.rows[i];
  const auto found = simulated_.find(fingerprints_[i]);
  if (found == simulated_.end()) {  // its twin could not run
    row.fate = CandidateFate::kNotRunnable;
    row.reason = "a run with identical costs could not run";
    return;
  }
  const PlanCandidate& c = row.candidate;
  const Evaluated& e = found->second;
  row.job_samples_per_s = e.samples_per_s * c.data;
  row.step_s = batch_ / row.job_samples_per_s;
  // A device's ops run one at a time: a step shorter than the busiest device's work breaks physics.
  // (The slack: fused F&B slots split their time between the two ops to the nanosecond.) Short by up to
  // 0.1 %, the window the steady-state search settled on was not quite steady (an optimizer step more
  // or less in it; `pipesim run` may find none): listed as failed with why, as run skips it.
  const double short_by = 1 - row.step_s / row.busiest_work_s;
  if (short_by > 1e-6 && short_by <= 1e-3) {
    row.fate = CandidateFate::kFailed;
    row.reason = fmt::format(
        "simulated step {:.9g} s is {:.2g} % below its busiest GPU's work {:.9g} s: the measured "
        "window "
        "was not a steady state",
        row.step_s, 100 * short_by, row.busiest_work_s);
    return;
  }
  if (short_by > 1e-6) {
    throw std::logic_error(
        fmt::format("plan: {} {}: simulated step {} s is shorter than its busiest GPU's "
                    "work {} s",
                    row.label, candidate_shape_text(c), row.step_s, row.busiest_work_s));
  }
  if (e.peak_bytes < row.min_peak_bytes * (1 - 1e-6)) {
    throw std::logic_error(fmt::format("plan: {} {}: simulated peak memory {} B is below its bound {} B",
                                       row.label, candidate_shape_text(c), e.peak_bytes, row.min_peak_bytes));
  }
  row.peak_bytes = e.peak_bytes;
  const double samples_per_gpu_s = row.job_samples_per_s / result_.gpus;
  row.tokens_per_gpu_s = samples_per_gpu_s * setup_.model.seq_len;
  row.tflops_per_gpu = samples_per_gpu_s * model_flops_per_sample(setup_.model) / 1e12;
  const auto peak = setup_.profile.peak_tflops.find(setup_.model.dtype);
  row.mfu =
      peak != setup_.profile.peak_tflops.end() && peak->second > 0 ? row.tflops_per_gpu / peak->second : 0;
  row.idle_fraction = std::max(0.0, 1 - row.busiest_work_s / row.step_s);  // >= 0 to the slack above
  row.fate = e.peak_bytes > result_.capacity_bytes ? CandidateFate::kOverMemory : fate;
}

}  // namespace

const char* fate_name(CandidateFate fate) {
  switch (fate) {
    case CandidateFate::kNotRunnable:
      return "not runnable";
    case CandidateFate::kOverMemoryBound:
      return "over memory (bound)";
    case CandidateFate::kPrunedByBound:
      return "pruned (throughput bound)";
    case CandidateFate::kSimulated:
      return "simulated";
    case CandidateFate::kReused:
      return "reused";
    case CandidateFate::kOverMemory:
      return "over memory (simulated)";
    case CandidateFate::kFailed:
      return "failed";
  }
  return "";
}

size_t PlanResult::count(CandidateFate fate) const {
  return static_cast<size_t>(
      std::count_if(rows.begin(), rows.end(), [fate](const PlanRow& r) { return r.fate == fate; }));
}

PlanResult run_plan(const Scenario& scenario, const PlanOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  PlanSpaceOptions space = options.space;
  if (space.schedules.empty()) space.schedules = select_schedules(scenario, default_plan_schedules());
  for (const ScheduleRequest& request : space.schedules) {
    make_schedule(request.name, request.params);  // a bad name or parameter is bad input, not a skipped run
  }
  const std::vector<PlanCandidate> candidates = plan_candidates(scenario, space);
  PlanResult result;
  result.gpus = space.gpus;
  result.global_batch = plan_global_batch(scenario, space);
  const TransformerSetup& setup = *scenario.transformer;
  result.capacity_bytes = setup.profile.usable_memory_bytes();
  if (result.capacity_bytes <= 0) {
    throw InputError(
        fmt::format("hardware profile {}: no memory_capacity_gb, which `pipesim plan` needs to "
                    "keep configurations that fit",
                    setup.profile.name));
  }
  // Serving ranks (--mpi) simulate the candidates rank 0 hands them; rank 0 runs the search.
  const auto job = [&](size_t i) {
    return encode(simulate_candidate(scenario, candidates[i], space.sequence_parallel, options.limits));
  };
  result.leader = lead_or_serve(options.mpi, job, [&](const FarmRun& farm) {
    PlanSearch(scenario, options, space, candidates, farm, result).run();
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  return result;
}

}  // namespace pipesim
