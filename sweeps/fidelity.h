#pragma once
// `pipesim fidelity`: every scenario of published runs (a `measured:` section each) run as its source ran
// it, each measured figure beside its prediction, and the errors per source and over all runs.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "report/measured_comparison.h"
#include "sim/limits.h"
#include "spec/measured_run.h"
#include "spec/scenario.h"

namespace pipesim {

struct FidelityRun {
  std::string path;  // the scenario file
  std::string name;  // the scenario's name
  MeasuredRun measured;
  std::string predicted_by;  // the schedule entry's label as it ran
  std::string profile_kind;  // the hardware profile's provenance.kind
  std::vector<FigureComparison> figures;
  std::string failure;  // why nothing was predicted (the run's error); empty when it ran
  // The run's speed figure (its first of step time, tokens/s per GPU, TFLOP/s, MFU) and the
  // memory figure, when measured and predicted.
  std::optional<FigureComparison> speed() const;
  std::optional<FigureComparison> memory() const;
};

// Errors of one source's runs (or of all: source "all"). The speed error of a run is its speed figure's
// relative error in that figure's unit; `speed_bias` is the mean of predicted over measured speed minus 1
// (a step time inverted first), so positive means optimistic whatever the figure.
struct FidelityErrors {
  std::string source;
  int runs = 0;
  int speed_runs = 0;
  double speed_mape = 0;
  double speed_bias = 0;
  double worst_speed_error = 0;  // the largest |error|, signed
  int memory_runs = 0;
  double memory_mape = 0;
};

// The runs naming one measured.ranking, ordered by measured and by predicted speed (faster first; a step
// time inverted). A pair counts when both runs measured the same speed figure and their measured values
// differ; it is ordered as measured when the prediction puts the same run first.
struct FidelityRanking {
  std::string ranking;
  std::string source;  // the first run's
  int runs = 0;
  int pairs = 0;
  int ordered_as_measured = 0;
  std::string measured_fastest, predicted_fastest;  // scenario names
};

struct Fidelity {
  std::vector<FidelityRun> runs;          // in file-name order
  std::vector<FidelityErrors> sources;    // sorted by name, then "all"
  std::vector<FidelityRanking> rankings;  // sorted by name
};

// The scenarios with a `measured:` section among `paths` (files, or directories whose *.yaml are taken,
// sorted by name), each read once. InputError when a path does not exist, a named file measures nothing, a
// file does not parse (naming it) or nothing measured is found.
std::vector<Scenario> measured_scenarios(const std::vector<std::string>& paths);

// Runs each scenario's measured schedule (measured.schedule, else its first entry) with `limits`. A run that
// fails is kept with its failure.
Fidelity run_fidelity(const std::vector<Scenario>& scenarios, const Limits& limits,
                      const std::function<void(size_t done)>& progress = {});

// The errors of `runs` per source (sorted by name) and over all ("all" last).
std::vector<FidelityErrors> fidelity_errors(const std::vector<FidelityRun>& runs);
// The rankings `runs` name, each over its runs that were predicted.
std::vector<FidelityRanking> fidelity_rankings(const std::vector<FidelityRun>& runs);

}  // namespace pipesim
