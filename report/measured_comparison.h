#pragma once
// A run's predictions against what a published run of the same job measured (a scenario's `measured:`):
// figure by figure, with the relative error, for `pipesim run` and the comparison over many runs.
#include <optional>
#include <string>
#include <vector>

#include "analysis/run_result.h"
#include "spec/measured_run.h"

namespace pipesim {

struct FigureComparison {
  MeasuredFigure figure = MeasuredFigure::kStepTimeS;
  double measured = 0;
  std::optional<double> predicted;  // empty when the run cannot know it (no sequence length, no peak)
  // (predicted - measured) / measured; empty without a prediction.
  std::optional<double> relative_error() const;
};

// The prediction of `figure`, in the unit measured_figure_info() gives; empty when the run cannot know it.
std::optional<double> predicted_figure(const SimulationResult& result, MeasuredFigure figure);

// The result the measurement describes: the first whose schedule is `measured.schedule`, or the first
// result when it names none; null when none ran.
const SimulationResult* measured_result(const MeasuredRun& measured,
                                        const std::vector<SimulationResult>& results);

// Every measured figure beside its prediction, in the measurement's order.
std::vector<FigureComparison> compare_with_measured(const MeasuredRun& measured,
                                                    const SimulationResult& result);

// A measured or predicted figure for a report: four significant digits below 1,000 (13.75, 0.4123), whole and
// grouped above (5,762).
std::string measured_figure_text(double value);

// The lines `pipesim run` prints under the table for a scenario with `measured:`: which run, where the
// figures were published, each figure measured and predicted with the error, and how FLOPs were counted.
std::string measured_comparison_text(const MeasuredRun& measured,
                                     const std::vector<SimulationResult>& results);

}  // namespace pipesim
