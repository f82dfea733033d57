#include "sweeps/profile_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "api/simulation.h"
#include "base/did_you_mean.h"
#include "base/errors.h"
#include "cost_models/transformer/device.h"
#include "io/csv_table.h"
#include "io/layer_times.h"
#include "report/format.h"

namespace pipesim {
namespace {

struct TermInfo {
  FitTerm term;
  const char* name;
  double low, high;  // the search's bounds
  bool log_scale;
};

const std::vector<TermInfo>& term_table() {
  static const std::vector<TermInfo> table = {
      {FitTerm::kGemmEfficiency, "gemm", 0.2, 2.0, true},
      {FitTerm::kElementwiseEfficiency, "elementwise", 0.05, 10.0, true},
      {FitTerm::kAttentionEfficiency, "attention", 0.05, 1.5, true},
      {FitTerm::kHostOverhead, "overhead", 0.0, 10000.0, false},  // us per op
  };
  return table;
}

const TermInfo& info(FitTerm term) {
  for (const TermInfo& t : term_table()) {
    if (t.term == term) return t;
  }
  throw std::logic_error("unknown fit term");
}

double get(const ProfileFit& fit, FitTerm term) {
  switch (term) {
    case FitTerm::kGemmEfficiency:
      return fit.gemm_efficiency;
    case FitTerm::kElementwiseEfficiency:
      return fit.elementwise_efficiency;
    case FitTerm::kAttentionEfficiency:
      return fit.attention_efficiency;
    case FitTerm::kHostOverhead:
      return fit.host_overhead_us;
  }
  return 0;
}

void set(ProfileFit& fit, FitTerm term, double value) {
  switch (term) {
    case FitTerm::kGemmEfficiency:
      fit.gemm_efficiency = value;
      break;
    case FitTerm::kElementwiseEfficiency:
      fit.elementwise_efficiency = value;
      break;
    case FitTerm::kAttentionEfficiency:
      fit.attention_efficiency = value;
      break;
    case FitTerm::kHostOverhead:
      fit.host_overhead_us = value;
      break;
  }
}

// The starting point: neutral efficiencies, the transformer model's default attention share, the profile's
// own host overhead.
ProfileFit start_fit(const HardwareProfile& raw) {
  ProfileFit fit;
  fit.attention_efficiency = flash_attention_efficiency(raw);
  fit.host_overhead_us = raw.host_overhead_us;
  return fit;
}

double mean_squared_log_error(const HardwareProfile& raw, const ProfileFit& fit,
                              const std::vector<const FitObservation*>& rows) {
  const HardwareProfile profile = with_fit(raw, fit);
  double sum = 0;
  for (const FitObservation* o : rows) {
    const double predicted = o->predict_s(profile);
    const double e = std::log(std::max(predicted, 1e-15) / o->measured_s);
    sum += e * e;
  }
  return sum / static_cast<double>(rows.size());
}

// Golden-section search of one term over its bounds (log scale for efficiencies, sqrt scale for the
// overhead, whose useful values span microseconds to milliseconds).
double search_term(const HardwareProfile& raw, ProfileFit fit, FitTerm term,
                   const std::vector<const FitObservation*>& rows, int& evaluations) {
  const TermInfo& t = info(term);
  auto to_x = [&](double v) { return t.log_scale ? std::log(v) : std::sqrt(std::max(v, 0.0)); };
  auto from_x = [&](double x) { return std::clamp(t.log_scale ? std::exp(x) : x * x, t.low, t.high); };
  double a = to_x(t.low), b = to_x(t.high);
  auto cost = [&](double x) {
    set(fit, term, from_x(x));
    ++evaluations;
    return mean_squared_log_error(raw, fit, rows);
  };
  const double phi = (std::sqrt(5.0) - 1) / 2;
  double c = b - phi * (b - a), d = a + phi * (b - a);
  double fc = cost(c), fd = cost(d);
  for (int i = 0; i < 40 && b - a > 1e-5; ++i) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - phi * (b - a);
      fc = cost(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + phi * (b - a);
      fd = cost(d);
    }
  }
  return from_x((a + b) / 2);
}

// Nelder-Mead over the terms' search coordinates (log for efficiencies, sqrt for the overhead), clamped to
// their bounds, started from one golden-section pass per term; the terms trade off against each other (a
// faster GEMM against a slower attention kernel), which one term at a time would only creep along.
ProfileFit fit_terms(const HardwareProfile& raw, const std::vector<FitTerm>& terms,
                     const std::vector<const FitObservation*>& rows, int& evaluations) {
  ProfileFit fit = start_fit(raw);
  for (FitTerm term : terms) set(fit, term, search_term(raw, fit, term, rows, evaluations));
  const size_t n = terms.size();
  auto to_x = [&](FitTerm term, double v) {
    return info(term).log_scale ? std::log(v) : std::sqrt(std::max(v, 0.0));
  };
  auto from_x = [&](FitTerm term, double x) {
    const TermInfo& t = info(term);
    const double lo = to_x(term, t.low), hi = to_x(term, t.high);
    x = std::clamp(x, lo, hi);
    return std::clamp(t.log_scale ? std::exp(x) : x * x, t.low, t.high);
  };
  auto at = [&](const std::vector<double>& x) {
    ProfileFit candidate = fit;
    for (size_t i = 0; i < n; ++i) set(candidate, terms[i], from_x(terms[i], x[i]));
    return candidate;
  };
  auto cost = [&](const std::vector<double>& x) {
    ++evaluations;
    return mean_squared_log_error(raw, at(x), rows);
  };
  std::vector<std::vector<double>> simplex(n + 1, std::vector<double>(n));
  for (size_t i = 0; i < n; ++i) simplex[0][i] = to_x(terms[i], get(fit, terms[i]));
  for (size_t k = 1; k <= n; ++k) {
    simplex[k] = simplex[0];
    simplex[k][k - 1] += info(terms[k - 1]).log_scale ? 0.1 : 1.0;
  }
  std::vector<double> costs(n + 1);
  for (size_t k = 0; k <= n; ++k) costs[k] = cost(simplex[k]);
  for (int iteration = 0; iteration < 400 * static_cast<int>(n); ++iteration) {
    std::vector<size_t> order(n + 1);
    for (size_t k = 0; k <= n; ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return costs[a] < costs[b]; });
    const size_t best = order.front(), worst = order.back(), second = order[n - 1];
    if (costs[worst] - costs[best] <= 1e-12 * std::max(1.0, costs[best])) {
      double spread = 0;
      for (size_t k = 0; k <= n; ++k) {
        for (size_t i = 0; i < n; ++i) spread = std::max(spread, std::abs(simplex[k][i] - simplex[best][i]));
      }
      if (spread < 1e-7) break;
    }
    std::vector<double> centroid(n, 0);
    for (size_t k = 0; k <= n; ++k) {
      if (k == worst) continue;
      for (size_t i = 0; i < n; ++i) centroid[i] += simplex[k][i] / static_cast<double>(n);
    }
    auto along = [&](double t) {
      std::vector<double> x(n);
      for (size_t i = 0; i < n; ++i) x[i] = centroid[i] + t * (simplex[worst][i] - centroid[i]);
      return x;
    };
    const std::vector<double> reflected = along(-1);
    const double reflected_cost = cost(reflected);
    if (reflected_cost < costs[best]) {
      const std::vector<double> expanded = along(-2);
      const double expanded_cost = cost(expanded);
      if (expanded_cost < reflected_cost) {
        simplex[worst] = expanded;
        costs[worst] = expanded_cost;
      } else {
        simplex[worst] = reflected;
        costs[worst] = reflected_cost;
      }
      continue;
    }
    if (reflected_cost < costs[second]) {
      simplex[worst] = reflected;
      costs[worst] = reflected_cost;
      continue;
    }
    const std::vector<double> contracted = along(reflected_cost < costs[worst] ? -0.5 : 0.5);
    const double contracted_cost = cost(contracted);
    if (contracted_cost < std::min(reflected_cost, costs[worst])) {
      simplex[worst] = contracted;
      costs[worst] = contracted_cost;
      continue;
    }
    for (size_t k = 0; k <= n; ++k) {  // shrink towards the best
      if (k == best) continue;
      for (size_t i = 0; i < n; ++i)
        simplex[k][i] = simplex[best][i] + 0.5 * (simplex[k][i] - simplex[best][i]);
      costs[k] = cost(simplex[k]);
    }
  }
  const size_t best = static_cast<size_t>(std::min_element(costs.begin(), costs.end()) - costs.begin());
  return at(simplex[best]);
}

double mape(const std::vector<double>& predicted, const std::vector<double>& measured) {
  double sum = 0;
  for (size_t i = 0; i < predicted.size(); ++i) sum += std::abs(predicted[i] / measured[i] - 1);
  return predicted.empty() ? 0 : sum / static_cast<double>(predicted.size());
}

std::vector<FitObservation> layer_time_observations(const std::string& csv) {
  const LayerTimesFile file = load_layer_times(csv);
  std::vector<FitObservation> observations;
  for (const MeasuredLayerTimes& m : file.rows) {
    const std::string row = fmt::format(
        "{} s={} b={}{}", m.config, m.model.seq_len, m.micro_batch,
        m.model.recompute == Recompute::kNone ? "" : " recompute=" + recompute_name(m.model.recompute));
    auto op = [&](const char* name, double measured_ms, double (*pick)(const LayerTimesComparison&)) {
      FitObservation o;
      o.label = row + " " + name;
      o.group = m.config;
      o.measured_s = measured_ms * 1e-3;
      o.predict_s = [m, pick](const HardwareProfile& profile) {
        return pick(compare_layer_times(profile, {m}).front()) * 1e-3;
      };
      observations.push_back(std::move(o));
    };
    op("F", m.forward_ms, [](const LayerTimesComparison& c) { return c.forward_ms; });
    op("I", m.backward_input_ms, [](const LayerTimesComparison& c) { return c.backward_input_ms; });
    op("B", m.backward_ms, [](const LayerTimesComparison& c) { return c.backward_ms(); });
  }
  return observations;
}

std::vector<std::string> split_overrides(const std::string& text) {
  std::vector<std::string> overrides;
  std::stringstream stream(text);
  for (std::string item; std::getline(stream, item, ';');) {
    if (!item.empty()) overrides.push_back(item);
  }
  return overrides;
}

std::vector<FitObservation> step_time_observations(const CsvTable& table, const Limits& limits) {
  namespace fs = std::filesystem;
  const fs::path base = fs::path(table.path()).parent_path();
  std::vector<FitObservation> observations;
  for (size_t i = 0; i < table.size(); ++i) {
    const std::string where = fmt::format("{}:{}", table.path(), table.line(i));
    fs::path scenario_path = table.text(i, "scenario");
    // Relative to the CSV first (a study directory carries its own scenarios), else to the working directory.
    if (scenario_path.is_relative() && fs::is_regular_file(base / scenario_path))
      scenario_path = base / scenario_path;
    const std::vector<std::string> overrides =
        table.has_column("set") ? split_overrides(table.text(i, "set")) : std::vector<std::string>{};
    Scenario scenario;
    try {
      scenario = load_scenario(scenario_path.string(), overrides);
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: column 'scenario': {}", where, e.what()));
    }
    if (!scenario.transformer) {
      throw InputError(
          fmt::format("{}: scenario {} has explicit costs (costs:), not model: and hardware:; a fit "
                      "adjusts a profile, so it needs a scenario whose costs come from one",
                      where, scenario_path.string()));
    }
    const std::string schedule = table.text(i, "schedule");
    ScheduleRequest request{schedule, {}};
    std::vector<std::string> listed;
    bool found = scenario.schedules.empty();
    for (const ScheduleRequest& r : scenario.schedules) {
      listed.push_back(r.name);
      if (!found && r.name == schedule) {
        request = r;
        found = true;
      }
    }
    if (!found) {
      throw InputError(fmt::format("{}: column 'schedule': '{}' is not among {}'s schedules ({}){}", where,
                                   schedule, scenario_path.string(), fmt::join(listed, ", "),
                                   did_you_mean(schedule, listed)));
    }
    double measured_s = 0;
    if (table.has_column("step_time_ms")) {
      measured_s = table.number(i, "step_time_ms") * 1e-3;
    } else {
      throw InputError(
          fmt::format("{}: no column 'step_time_ms' (a step time needs one; columns scenario, "
                      "schedule, step_time_ms and optionally set)",
                      table.path()));
    }
    if (!(measured_s > 0)) throw InputError(fmt::format("{}: step_time_ms must be above 0", where));
    // Resolve once now: a schedule that cannot run this scenario fails here, naming the row.
    bool asynchronous = false;
    try {
      const ResolvedRun run = resolve(scenario, request, ResolveOptions{.check = true, .limits = limits});
      asynchronous = run.spec.sync == OptimizerSync::kNone;
    } catch (const InputError& e) {
      throw InputError(fmt::format("{}: {}", where, e.what()));
    }
    FitObservation o;
    o.label = fmt::format("{}:{} {}{}", fs::path(table.path()).filename().string(), table.line(i), schedule,
                          overrides.empty() ? "" : fmt::format(" [{}]", fmt::join(overrides, " ")));
    o.group = schedule;
    o.held_out_first = asynchronous;
    o.measured_s = measured_s;
    o.predict_s = [scenario, request, limits](const HardwareProfile& profile) {
      Scenario run = scenario;
      const double reserve = run.transformer->profile.reserve_gb;
      run.transformer->profile = profile;
      run.transformer->profile.reserve_gb = reserve;
      SimulationOptions options;
      options.keep_trace = false;
      options.limits = limits;
      const SimulationResult result = simulate_schedule(run, request, options);
      const double samples = result.microbatch_size * result.spec.microbatches;
      return samples / result.metrics.throughput_samples_per_s;
    };
    observations.push_back(std::move(o));
  }
  return observations;
}

}  // namespace

std::string fit_term_name(FitTerm term) {
  return info(term).name;
}

FitTerm parse_fit_term(const std::string& name) {
  std::vector<std::string> names;
  for (const TermInfo& t : term_table()) {
    if (name == t.name) return t.term;
    names.push_back(t.name);
  }
  throw InputError(fmt::format("fit term '{}': expected one of {}{}", name, fmt::join(names, ", "),
                               did_you_mean(name, names)));
}

std::vector<FitObservation> load_fit_observations(const std::string& csv, std::string* kind,
                                                  const Limits& limits) {
  const CsvTable table(csv, "measured times to fit a profile to");
  std::vector<FitObservation> observations;
  if (table.has_column("F_ms")) {
    *kind = "layer times";
    observations = layer_time_observations(csv);
  } else if (table.has_column("scenario")) {
    *kind = "step times";
    observations = step_time_observations(table, limits);
  } else {
    throw InputError(
        fmt::format("{}: neither layer times (columns config, ..., F_ms, B_ms, I_ms, W_ms: "
                    "torch_layer_times.py) nor step "
                    "times (columns scenario, schedule, step_time_ms[, set])",
                    csv));
  }
  if (observations.empty()) throw InputError(fmt::format("{}: no rows to fit to", csv));
  return observations;
}

FitResult fit_profile(const HardwareProfile& raw, const std::vector<FitObservation>& observations,
                      const std::string& kind, const FitOptions& options,
                      const std::function<void(const std::string&)>& progress) {
  FitResult result;
  result.kind = kind;
  result.terms = options.terms;
  if (result.terms.empty()) {
    result.terms = kind == "layer times"
                       ? std::vector<FitTerm>{FitTerm::kGemmEfficiency, FitTerm::kElementwiseEfficiency,
                                              FitTerm::kAttentionEfficiency}
                       : std::vector<FitTerm>{FitTerm::kGemmEfficiency, FitTerm::kElementwiseEfficiency,
                                              FitTerm::kHostOverhead};
  }
  std::vector<const FitObservation*> all;
  for (const FitObservation& o : observations) all.push_back(&o);
  if (all.size() < result.terms.size()) {
    throw InputError(fmt::format("{} measured figures cannot fit {} terms: give more rows or fewer --terms",
                                 all.size(), result.terms.size()));
  }
  auto report = [&](const std::string& line) {
    if (progress) progress(line);
  };
  report(fmt::format("fitting {} to {} {}",
                     fmt::join(
                         [&] {
                           std::vector<std::string> names;
                           for (FitTerm t : result.terms) names.push_back(fit_term_name(t));
                           return names;
                         }(),
                         ", "),
                     all.size(), kind));
  result.fit = fit_terms(raw, result.terms, all, result.evaluations);
  const HardwareProfile before = raw, after = with_fit(raw, result.fit);
  std::vector<double> measured, predicted_before, predicted_after;
  for (const FitObservation& o : observations) {
    FitRowResult row;
    row.label = o.label;
    row.group = o.group;
    row.measured_s = o.measured_s;
    row.before_s = o.predict_s(before);
    row.after_s = o.predict_s(after);
    measured.push_back(row.measured_s);
    predicted_before.push_back(row.before_s);
    predicted_after.push_back(row.after_s);
    result.rows.push_back(row);
  }
  result.mape_before = mape(predicted_before, measured);
  result.mape_after = mape(predicted_after, measured);
  if (!options.cross_validate) return result;

  // The splits: asynchronous rows held out of a fit on the synchronous ones, or each group in turn.
  std::vector<std::vector<bool>> held_out_sets;
  const bool some_async = std::any_of(all.begin(), all.end(), [](auto* o) { return o->held_out_first; });
  const bool some_sync = std::any_of(all.begin(), all.end(), [](auto* o) { return !o->held_out_first; });
  if (some_async && some_sync) {
    std::vector<bool> held(all.size());
    for (size_t i = 0; i < all.size(); ++i) held[i] = all[i]->held_out_first;
    held_out_sets.push_back(held);
    result.cross_validation = "fitted on the synchronous schedules' rows, predicting the asynchronous ones";
  } else {
    std::vector<std::string> groups;
    for (const FitObservation* o : all) {
      if (std::find(groups.begin(), groups.end(), o->group) == groups.end()) groups.push_back(o->group);
    }
    if (groups.size() < 2) {
      result.cross_validation =
          "none: every row is one " + std::string(kind == "layer times" ? "configuration" : "schedule");
      return result;
    }
    for (const std::string& g : groups) {
      std::vector<bool> held(all.size());
      for (size_t i = 0; i < all.size(); ++i) held[i] = all[i]->group == g;
      held_out_sets.push_back(held);
    }
    result.cross_validation =
        fmt::format("each {} held out in turn ({} fits)",
                    kind == "layer times" ? "configuration" : "schedule", groups.size());
  }
  std::vector<double> cv_predicted, cv_measured;
  for (size_t k = 0; k < held_out_sets.size(); ++k) {
    std::vector<const FitObservation*> train;
    for (size_t i = 0; i < all.size(); ++i) {
      if (!held_out_sets[k][i]) train.push_back(all[i]);
    }
    if (train.size() < result.terms.size()) continue;
    report(fmt::format("cross-validation fit {} of {}", k + 1, held_out_sets.size()));
    const HardwareProfile fitted = with_fit(raw, fit_terms(raw, result.terms, train, result.evaluations));
    for (size_t i = 0; i < all.size(); ++i) {
      if (!held_out_sets[k][i]) continue;
      result.rows[i].cross_validated_s = all[i]->predict_s(fitted);
      cv_predicted.push_back(result.rows[i].cross_validated_s);
      cv_measured.push_back(all[i]->measured_s);
    }
  }
  if (!cv_predicted.empty()) result.mape_cross_validated = mape(cv_predicted, cv_measured);
  return result;
}

std::string render_fit_result(const FitResult& r, const std::string& profile_source) {
  auto ms = [](double s) { return fmt::format("{:.3f}", s * 1e3); };
  auto rel = [](double predicted, double measured) {
    return fmt::format("{:+.1f}%", 100 * (predicted / measured - 1));
  };
  std::vector<std::vector<std::string>> table;
  for (const FitRowResult& row : r.rows) {
    table.push_back({row.label, ms(row.measured_s),
                     ms(row.before_s) + " (" + rel(row.before_s, row.measured_s) + ")",
                     ms(row.after_s) + " (" + rel(row.after_s, row.measured_s) + ")",
                     row.cross_validated_s > 0
                         ? ms(row.cross_validated_s) + " (" + rel(row.cross_validated_s, row.measured_s) + ")"
                         : "-"});
  }
  std::string out =
      fmt::format("Fit of {} to {} ({} rows), times in ms\n\n", profile_source, r.kind, r.rows.size());
  out += render_table({"row", "measured", "before fit", "after fit", "cross-validated"}, table);
  std::vector<std::string> terms;
  for (FitTerm t : r.terms) {
    const double v = get(r.fit, t);
    terms.push_back(t == FitTerm::kHostOverhead ? fmt::format("overhead {:.2f} us per op", v)
                                                : fmt::format("{} efficiency {:.4f}", fit_term_name(t), v));
  }
  out += fmt::format("\nfitted: {}\n", fmt::join(terms, ", "));
  out += fmt::format("mean |error|: {:.1f}% before, {:.1f}% after the fit", 100 * r.mape_before,
                     100 * r.mape_after);
  if (r.mape_cross_validated >= 0) {
    out += fmt::format("; {:.1f}% cross-validated ({})", 100 * r.mape_cross_validated, r.cross_validation);
  } else {
    out += fmt::format("; cross-validation: {}", r.cross_validation.empty() ? "off" : r.cross_validation);
  }
  out += "\n";
  return out;
}

}  // namespace pipesim
