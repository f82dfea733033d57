#include "sweeps/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <exception>
#include <map>
#include <memory>
#include <thread>

#include "api/resolve.h"
#include "base/errors.h"
#include "base/task_pool.h"
#include "report/format.h"
#include "report/progress_bar.h"
#include "schedules/registry.h"
#include "sim/resource_estimate.h"

namespace pipesim {
namespace {

struct Job {
  std::shared_ptr<const Scenario> scenario;
  ScheduleRequest request;
  size_t summary = 0;    // index into CheckReport::schedules
  int accumulation = 0;  // 0: none
  int seed = 0;
  bool saturated = false;  // exact uniform costs: check the lower bounds too
};

struct Outcome {
  bool skipped = false;
  bool general_bound_differs = false;  // some stage's general drift bound is not the checked invariant
  std::vector<Violation> violations;
  std::exception_ptr input_error;  // scenario mode: a bad scenario stops the check
};

// The first microbatch of `values` above `bound`, or -1.
int first_above(const std::vector<int>& values, int bound, int from = 0) {
  for (int j = from; j < static_cast<int>(values.size()); ++j) {
    if (values[j] > bound) return j;
  }
  return -1;
}

Outcome run_job(const Job& job, const CheckOptions& options, bool skip_bad_input) {
  Outcome outcome;
  SimulationOptions sim;
  sim.analyze_graph = false;
  sim.limits = options.limits;
  if (job.seed > 0) {
    NoiseSpec noise = options.noise;
    noise.seed = static_cast<std::uint64_t>(job.seed);
    sim.decorate_costs = [noise](std::unique_ptr<CostModel> base) -> std::unique_ptr<CostModel> {
      return std::make_unique<NoisyCosts>(std::move(base), noise);
    };
  }
  try {
    const SimulationResult result = simulate_schedule(*job.scenario, job.request, sim);
    for (const StageGuarantee& g : result.guarantees) {
      outcome.general_bound_differs |= g.drift_bound != g.invariant_drift_bound;
    }
    outcome.violations = check_run(result, job.accumulation, job.seed, job.saturated);
  } catch (const ResourceLimitError&) {
    outcome.input_error =
        std::current_exception();  // too large to check: said, never skipped as "not allowed"
  } catch (const InputError&) {
    if (skip_bad_input) {
      outcome.skipped = true;
    } else {
      outcome.input_error = std::current_exception();
    }
  } catch (const std::exception& e) {
    Violation v;
    v.schedule = job.request.name;
    v.stages = job.scenario->stages;
    v.microbatches = job.scenario->microbatches;
    v.accumulation = job.accumulation;
    v.seed = job.seed;
    v.what = std::string("run failed: ") + e.what();
    outcome.violations.push_back(v);
  }
  return outcome;
}

std::vector<Outcome> run_jobs(const std::vector<Job>& jobs, const CheckOptions& options,
                              bool skip_bad_input) {
  std::vector<Outcome> outcomes(jobs.size());
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  ProgressBar progress(jobs.size(), "runs", ProgressBar::stderr_is_terminal());
  auto worker = [&] {
    for (size_t k = next++; k < jobs.size(); k = next++) {
      outcomes[k] = run_job(jobs[k], options, skip_bad_input);
      progress.update(++done);
    }
  };
  run_workers(worker_count(options.threads, jobs.size(), "--threads"), worker);
  for (const Outcome& o : outcomes) {
    if (o.input_error) std::rethrow_exception(o.input_error);
  }
  return outcomes;
}

CheckReport summarize(std::vector<ScheduleCheckSummary> summaries, const std::vector<Job>& jobs,
                      const std::vector<Outcome>& outcomes) {
  CheckReport report;
  report.schedules = std::move(summaries);
  for (size_t k = 0; k < jobs.size(); ++k) {
    ScheduleCheckSummary& s = report.schedules[jobs[k].summary];
    const Outcome& o = outcomes[k];
    if (o.skipped) {
      ++s.skipped;
      continue;
    }
    ++s.runs;
    ++report.runs;
    s.general_bound_differs |= o.general_bound_differs;
    bool general_broken = false;
    for (const Violation& v : o.violations) {
      general_broken |= v.general_bound_check;
      if (!report.smallest || v.key() < report.smallest->key()) report.smallest = v;
    }
    if (!o.violations.empty()) {
      ++s.failed_runs;
      ++report.failed_runs;
    }
    if (general_broken) ++s.general_bound_broken_runs;
  }
  return report;
}

bool takes_accumulation(const std::string& name) {
  ScheduleParams params("pipesim check");
  params.set("accumulation", "1");
  try {
    make_schedule(name, params);
    return true;
  } catch (const InputError&) {
    return false;
  }
}

// The distinct values >= 1 of the terms for this N, ascending.
std::vector<int> evaluate_terms(const std::vector<std::string>& terms, int n) {
  std::vector<int> values;
  for (const std::string& term : terms) {
    const int value = evaluate_term(term, n);
    if (value >= 1) values.push_back(value);
  }
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

// Uniform costs; the comm latency alternates with the seed so that half the noisy runs pay one.
std::shared_ptr<const Scenario> grid_scenario(int n, int m, double comm_ms) {
  // At least 4N microbatches, so that noise has room to break an invariant; the simulator adds what the
  // steady state needs (sim/steady_state.h).
  const int batches = std::max(3, (4 * n + m - 1) / m);
  const std::string yaml = fmt::format(
      "pipeline: {{stages: {}, microbatches: {}, batches: {}}}\n"
      "costs: {{forward_ms: 1.0, backward_input_ms: 1.0, backward_weight_ms: 1.0, optimizer_ms: 0.1, "
      "comm_ms: {},\n"
      // M_W stated so that the schedules planned under a memory limit (zb-1p/2p, zb-v-greedy) run too.
      "        activation_bytes: 1e9, weight_grad_activation_bytes: 4e8}}\n",
      n, m, batches, comm_ms);
  return std::make_shared<const Scenario>(parse_scenario(yaml, fmt::format("check N={} m={}", n, m)));
}

std::string join_ints(const std::vector<int>& values) {
  std::string out;
  for (int v : values) {
    if (!out.empty()) out += ',';
    out += std::to_string(v);
  }
  return out;
}

std::string join_strings(const std::vector<std::string>& values) {
  std::string out;
  for (const std::string& v : values) {
    if (!out.empty()) out += ',';
    out += v;
  }
  return out;
}

std::string noise_text(const CheckOptions& o) {
  return fmt::format(
      "seed 0 exact costs, seeds 1..{}: jitter sigma {}, stage speeds sigma {}, stragglers {}% x{}",
      std::max(1, o.seeds) - 1, o.noise.jitter_sigma, o.noise.stage_speed_sigma,
      100 * o.noise.straggler_probability, o.noise.straggler_factor);
}

}  // namespace

int evaluate_term(const std::string& term, int n) {
  auto parse_int = [&](const char* first, const char* last, int& value) {
    auto [ptr, ec] = std::from_chars(first, last, value);
    return ec == std::errc() && ptr == last;
  };
  const char* begin = term.data();
  const char* end = term.data() + term.size();
  int value = 0;
  if (parse_int(begin, end, value)) return value;
  const size_t at = term.find('N');
  if (at != std::string::npos) {
    int factor = 1;
    int offset = 0;
    const bool factor_ok = at == 0 || parse_int(begin, begin + at, factor);
    const char* rest = begin + at + 1;
    const bool offset_ok =
        rest == end || ((*rest == '-' || *rest == '+') && parse_int(rest + 1, end, offset));
    if (factor_ok && offset_ok) return factor * n + (rest != end && *rest == '-' ? -offset : offset);
  }
  throw InputError(fmt::format("'{}': expected an integer or a term in N such as N, 2N, N-1, N+2", term));
}

std::vector<Violation> check_run(const SimulationResult& r, int accumulation, int seed, bool saturated) {
  std::vector<Violation> found;
  auto add = [&](int stage, int microbatch, std::string what, int value, int bound, std::string bound_name,
                 bool general) {
    Violation v;
    v.schedule = r.label;
    v.stages = r.spec.devices;
    v.microbatches = r.spec.microbatches;
    v.accumulation = accumulation;
    v.seed = seed;
    v.stage = stage;
    v.microbatch = microbatch;
    v.what = std::move(what);
    v.value = value;
    v.bound = bound;
    v.bound_name = std::move(bound_name);
    v.general_bound_check = general;
    v.general_bound = r.guarantees[stage].drift_bound;
    found.push_back(std::move(v));
  };
  for (size_t s = 0; s < r.drift.stages.size() && s < r.guarantees.size(); ++s) {
    const StageDrift& d = r.drift.stages[s];
    const StageGuarantee& g = r.guarantees[s];
    const int stage = static_cast<int>(s);
    const bool differs = g.drift_bound != g.invariant_drift_bound;
    if (const int j = first_above(d.drift, g.invariant_drift_bound); j >= 0) {
      add(stage, j, "Δ", d.drift[j], g.invariant_drift_bound,
          differs ? "the published invariant, ⌈(N−i)/a⌉ for PACI" : "the drift bound", false);
    }
    if (differs) {
      if (const int j = first_above(d.drift, g.drift_bound); j >= 0) {
        add(stage, j, "Δ", d.drift[j], g.drift_bound, "the general bound ⌈(L_i−1)/a⌉", true);
      }
    }
    if (const int j = first_above(d.staleness, g.staleness_bound); j >= 0) {
      add(stage, j, "τ", d.staleness[j], g.staleness_bound, "the staleness bound", false);
    }
    if (g.steady_staleness >= 0) {
      for (int j = r.spec.microbatches; j < static_cast<int>(d.staleness.size()); ++j) {
        if (d.staleness[j] >= 0 && d.staleness[j] != g.steady_staleness) {
          add(stage, j, "τ", d.staleness[j], g.steady_staleness, "the steady-state staleness", false);
          found.back().must_equal = true;
          break;
        }
      }
    }
    if (d.weight_versions_max > g.weight_versions) {
      add(stage, -1, "weight versions", d.weight_versions_max, g.weight_versions, "the live-version bound",
          false);
    }
    if (g.max_in_flight > 0 && d.in_flight_max > g.max_in_flight) {
      add(stage, -1, "in flight", d.in_flight_max, g.max_in_flight, "the in-flight limit L_i", false);
    }
    if (!saturated) continue;
    if (g.drift_max_reached && d.drift_max != g.drift_bound) {
      add(stage, -1, "Δ max", d.drift_max, g.drift_bound, "the saturated Δ max ⌈(L_i−1)/a⌉", false);
      found.back().must_equal = true;
    }
    // The window is whole a-cycles from a cycle start (sim/steady_state.h), so the mean is exact.
    if (g.saturated_drift_mean >= 0 && std::abs(d.drift_mean - g.saturated_drift_mean) > 1e-9) {
      add(stage, -1, "Δ mean", 0, 0, "the saturated mean (N−i)/a over whole a-cycles", false);
      found.back().must_equal = true;
      found.back().value_text = fmt::format("{:.6f}", d.drift_mean);
      found.back().bound_text = fmt::format("{:.6f}", g.saturated_drift_mean);
    }
    if (g.weight_versions_reached && d.weight_versions_max != g.weight_versions) {
      add(stage, -1, "weight versions", d.weight_versions_max, g.weight_versions,
          "the saturated version count N−i+1", false);
      found.back().must_equal = true;
    }
  }
  return found;
}

namespace {

// One grid point: a scenario and a request, run once per seed.
struct Point {
  std::shared_ptr<const Scenario> scenario;       // seed 0 and even seeds: no comm latency
  std::shared_ptr<const Scenario> comm_scenario;  // odd seeds: with comm latency
  ScheduleRequest request;
  size_t summary = 0;
  int accumulation = 0;
};

// Every point's runs, after the whole check's work is estimated against the ceiling (before any job exists:
// a million seeds must be refused, not allocated).
std::vector<Job> expand_seeds(const std::vector<Point>& points, const CheckOptions& options,
                              const std::string& how_to_lower) {
  double ops = 0;
  double runs = 0;  // those that can run: a point the schedule refuses costs nothing
  for (const Point& p : points) {
    ResolveOptions streamed;
    streamed.task_graph = false;
    streamed.records = false;
    streamed.limits = options.limits;
    const double point_ops = estimated_ops(*p.scenario, p.request, streamed);
    ops += point_ops * options.seeds;
    if (point_ops > 0) runs += options.seeds;
  }
  check_total_ops(ops, runs, "check", how_to_lower, options.limits);
  std::vector<Job> jobs;
  jobs.reserve(points.size() * static_cast<size_t>(options.seeds));
  for (const Point& p : points) {
    for (int seed = 0; seed < options.seeds; ++seed) {
      // Seed 0 runs the uniform costs exactly, without comm latency: the pipeline saturates.
      jobs.push_back({seed % 2 == 1 ? p.comm_scenario : p.scenario, p.request, p.summary, p.accumulation,
                      seed, seed == 0});
    }
  }
  return jobs;
}

}  // namespace

CheckReport check_grid(const CheckOptions& options) {
  std::vector<std::string> names = options.schedules;
  if (names.empty()) {
    for (const ScheduleInfo& info : registered_schedules()) names.push_back(info.name);
  }
  std::vector<ScheduleCheckSummary> summaries;
  std::vector<Point> points;
  std::map<std::tuple<int, int, int>, std::shared_ptr<const Scenario>> scenarios;
  const auto scenario = [&](int n, int m, int comm) {
    auto& s = scenarios[{n, m, comm}];
    if (!s) s = grid_scenario(n, m, 0.2 * comm);
    return s;
  };
  for (const std::string& name : names) {
    make_schedule(name, ScheduleParams("--schedules"));  // an unknown name is an input error
    summaries.push_back({name});
    const bool with_a = takes_accumulation(name);
    for (int n : options.stages) {
      for (int m : evaluate_terms(options.microbatches, n)) {
        const std::vector<int> as = with_a ? evaluate_terms(options.accumulation, n) : std::vector<int>{0};
        for (int a : as) {
          ScheduleRequest request{name, ScheduleParams("pipesim check")};
          if (a > 0) request.params.set("accumulation", std::to_string(a));
          points.push_back({scenario(n, m, 0), options.seeds > 1 ? scenario(n, m, 1) : nullptr, request,
                            summaries.size() - 1, a});
        }
      }
    }
  }
  const std::vector<Job> jobs = expand_seeds(
      points, options, "lower --seeds, or narrow the grid (-N, -m, --accumulation, --schedules)");
  CheckReport report = summarize(std::move(summaries), jobs, run_jobs(jobs, options, true));
  report.grid = fmt::format("N in {{{}}}, m in {{{}}}, a in {{{}}} (schedules with 'accumulation'); {}",
                            join_ints(options.stages), join_strings(options.microbatches),
                            join_strings(options.accumulation), noise_text(options));
  return report;
}

CheckReport check_scenario(const Scenario& scenario, const CheckOptions& options) {
  const auto shared = std::make_shared<const Scenario>(scenario);
  std::vector<ScheduleCheckSummary> summaries;
  std::vector<Point> points;
  for (const ScheduleRequest& request : requested_schedules(scenario)) {
    summaries.push_back({make_schedule(request.name, request.params)->label()});
    const int a = request.params.has("accumulation") ? request.params.get_int("accumulation", 0, 1) : 0;
    points.push_back({shared, shared, request, summaries.size() - 1, a});
  }
  std::vector<Job> jobs = expand_seeds(points, options, "lower --seeds or the scenario's N and m");
  for (Job& job : jobs) job.saturated = false;  // the scenario's own costs: no lower bounds to check
  CheckReport report = summarize(std::move(summaries), jobs, run_jobs(jobs, options, false));
  report.grid = fmt::format("scenario {}: N={}, m={}, {} batches; {}", scenario.name, scenario.stages,
                            scenario.microbatches, scenario.batches, noise_text(options));
  return report;
}

}  // namespace pipesim
