#include "sweeps/fidelity.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>

#include "api/simulation.h"
#include "api/unmodelled_check.h"
#include "base/errors.h"
#include "io/scenario.h"

namespace pipesim {
namespace {

namespace fs = std::filesystem;

bool is_speed(MeasuredFigure figure) {
  return figure != MeasuredFigure::kPeakMemoryGib;
}

// The entry the measurement describes: the first named measured.schedule, else the first entry.
ScheduleRequest measured_request(const Scenario& scenario) {
  const MeasuredRun& measured = *scenario.measured;
  for (const ScheduleRequest& request : scenario.schedules) {
    if (measured.schedule.empty() || request.name == measured.schedule) return request;
  }
  if (measured.schedule.empty()) {
    throw InputError(fmt::format("{}: measured: needs measured.schedule when the scenario lists no schedules",
                                 scenario.source));
  }
  return ScheduleRequest{measured.schedule, ScheduleParams(scenario.source)};
}

FidelityRun run_one(const Scenario& scenario, const Limits& limits) {
  FidelityRun run;
  run.path = scenario.source;
  run.name = scenario.name;
  run.measured = *scenario.measured;
  try {
    require_modelled(scenario);
    SimulationOptions options;
    options.keep_trace = false;
    options.limits = limits;
    const SimulationResult result = simulate_schedule(scenario, measured_request(scenario), options);
    run.predicted_by = result.label;
    run.profile_kind = result.profile_kind;
    run.figures = compare_with_measured(run.measured, result);
  } catch (const InputError& e) {
    run.failure = e.what();
  }
  return run;
}

double mean(const std::vector<double>& values) {
  double sum = 0;
  for (double v : values) sum += v;
  return values.empty() ? 0 : sum / static_cast<double>(values.size());
}

FidelityErrors errors_of(const std::string& source, const std::vector<const FidelityRun*>& runs) {
  FidelityErrors e;
  e.source = source;
  e.runs = static_cast<int>(runs.size());
  std::vector<double> speed_abs, speed_bias, memory_abs;
  for (const FidelityRun* run : runs) {
    if (const std::optional<FigureComparison> s = run->speed()) {
      const double error = *s->relative_error();
      speed_abs.push_back(std::abs(error));
      // Optimism whatever the unit: a step time's ratio inverted.
      const double ratio = *s->predicted / s->measured;
      speed_bias.push_back((s->figure == MeasuredFigure::kStepTimeS ? 1 / ratio : ratio) - 1);
      if (std::abs(error) > std::abs(e.worst_speed_error)) e.worst_speed_error = error;
    }
    if (const std::optional<FigureComparison> m = run->memory())
      memory_abs.push_back(std::abs(*m->relative_error()));
  }
  e.speed_runs = static_cast<int>(speed_abs.size());
  e.speed_mape = mean(speed_abs);
  e.speed_bias = mean(speed_bias);
  e.memory_runs = static_cast<int>(memory_abs.size());
  e.memory_mape = mean(memory_abs);
  return e;
}

}  // namespace

std::optional<FigureComparison> FidelityRun::speed() const {
  for (const FigureComparison& c : figures) {
    if (is_speed(c.figure) && c.predicted) return c;
  }
  return std::nullopt;
}

std::optional<FigureComparison> FidelityRun::memory() const {
  for (const FigureComparison& c : figures) {
    if (!is_speed(c.figure) && c.predicted) return c;
  }
  return std::nullopt;
}

std::vector<Scenario> measured_scenarios(const std::vector<std::string>& paths) {
  std::vector<Scenario> scenarios;
  for (const std::string& path : paths) {
    std::error_code error;
    if (fs::is_directory(path, error)) {
      std::vector<std::string> in_directory;
      for (const fs::directory_entry& entry : fs::directory_iterator(path)) {
        if (entry.is_regular_file() && entry.path().extension() == ".yaml")
          in_directory.push_back(entry.path().string());
      }
      std::sort(in_directory.begin(), in_directory.end());
      for (const std::string& file : in_directory) {
        Scenario scenario = load_scenario(file);
        if (scenario.measured) scenarios.push_back(std::move(scenario));
      }
    } else if (fs::is_regular_file(path, error)) {
      Scenario scenario = load_scenario(path);
      if (!scenario.measured) {
        throw InputError(
            fmt::format("{}: no measured: section (what a published run measured) to compare with", path));
      }
      scenarios.push_back(std::move(scenario));
    } else {
      throw InputError(fmt::format("{}: no such file or directory", path));
    }
  }
  if (scenarios.empty()) throw InputError("fidelity: no scenario with a measured: section found");
  return scenarios;
}

Fidelity run_fidelity(const std::vector<Scenario>& scenarios, const Limits& limits,
                      const std::function<void(size_t)>& progress) {
  Fidelity f;
  for (const Scenario& scenario : scenarios) {
    f.runs.push_back(run_one(scenario, limits));
    if (progress) progress(f.runs.size());
  }
  f.sources = fidelity_errors(f.runs);
  f.rankings = fidelity_rankings(f.runs);
  return f;
}

std::vector<FidelityErrors> fidelity_errors(const std::vector<FidelityRun>& runs) {
  std::map<std::string, std::vector<const FidelityRun*>> by_source;  // sorted by name
  std::vector<const FidelityRun*> all;
  for (const FidelityRun& run : runs) {
    by_source[run.measured.source].push_back(&run);
    all.push_back(&run);
  }
  std::vector<FidelityErrors> out;
  for (const auto& [source, of_source] : by_source) out.push_back(errors_of(source, of_source));
  out.push_back(errors_of("all", all));
  return out;
}

namespace {

// Higher is faster: a step time inverted.
double faster_is_higher(MeasuredFigure figure, double value) {
  return figure == MeasuredFigure::kStepTimeS ? 1 / value : value;
}

}  // namespace

std::vector<FidelityRanking> fidelity_rankings(const std::vector<FidelityRun>& runs) {
  std::map<std::string, std::vector<const FidelityRun*>> groups;  // sorted by name
  for (const FidelityRun& run : runs) {
    if (!run.measured.ranking.empty()) groups[run.measured.ranking].push_back(&run);
  }
  std::vector<FidelityRanking> out;
  for (const auto& [name, members] : groups) {
    FidelityRanking r;
    r.ranking = name;
    r.source = members.front()->measured.source;
    r.runs = static_cast<int>(members.size());
    double best_measured = -1, best_predicted = -1;
    for (size_t i = 0; i < members.size(); ++i) {
      const std::optional<FigureComparison> a = members[i]->speed();
      if (!a || !a->predicted) continue;
      const double measured_a = faster_is_higher(a->figure, a->measured),
                   predicted_a = faster_is_higher(a->figure, *a->predicted);
      if (measured_a > best_measured) best_measured = measured_a, r.measured_fastest = members[i]->name;
      if (predicted_a > best_predicted) best_predicted = predicted_a, r.predicted_fastest = members[i]->name;
      for (size_t j = i + 1; j < members.size(); ++j) {
        const std::optional<FigureComparison> b = members[j]->speed();
        if (!b || !b->predicted || b->figure != a->figure || b->measured == a->measured) continue;
        ++r.pairs;
        const bool a_first_measured = measured_a > faster_is_higher(b->figure, b->measured);
        const bool a_first_predicted = predicted_a > faster_is_higher(b->figure, *b->predicted);
        if (a_first_measured == a_first_predicted) ++r.ordered_as_measured;
      }
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace pipesim
