#pragma once
// What a published run measured, beside the job that produced it (a scenario's `measured:` section): the
// figures a prediction is compared with, and where they were published. A measurement is an input to a
// comparison, never an output (docs/design.md, "Against published runs"). There is no whole-job tokens/s: a
// run's figures are one pipeline replica's, and the job's replicas are not in them; per GPU is what compares.
#include <optional>
#include <string>
#include <vector>

namespace pipesim {

enum class MeasuredFigure {
  kStepTimeS,          // seconds per optimizer step (one batch)
  kTokensPerSPerGpu,   // tokens per second per GPU
  kModelTflopsPerGpu,  // model TFLOP/s per GPU, recomputation not counted
  kMfuPercent,         // model FLOPs utilization, % of the GPU's dense peak in the model's dtype
  kPeakMemoryGib,      // peak memory per GPU, GiB
};

// One row of the figure table: the YAML key, what it means and its unit.
struct MeasuredFigureInfo {
  const char* key;
  MeasuredFigure figure;
  const char* meaning;  // "time per step", ...
  const char* unit;     // "s", "tokens/s", ...
};
const std::vector<MeasuredFigureInfo>& measured_figures();  // in the order reports show them
const MeasuredFigureInfo& measured_figure_info(MeasuredFigure figure);

struct MeasuredValue {
  MeasuredFigure figure = MeasuredFigure::kStepTimeS;
  double value = 0;  // in the figure's unit, > 0
};

struct MeasuredRun {
  std::string source;     // short name of who published it, for the error per source ("torchtitan")
  std::string reference;  // where: repository and path, or paper, table and row
  // How the source counts FLOPs, when it publishes a FLOP figure (TFLOP/s or MFU): pipesim counts model
  // FLOPs without recomputation, so a figure counted otherwise must have been converted (say how here).
  std::string flops;
  std::string quote;     // the source's words or table row, verbatim (provenance; optional)
  std::string schedule;  // the scenario's schedule entry the run used (its label); empty: the first entry
  // Runs the source compares (configurations of one model): those naming the same ranking are ordered by
  // their measured speed and by pipesim's (`pipesim fidelity`'s rankings); empty: none.
  std::string ranking;
  std::vector<MeasuredValue> values;  // in measured_figures() order, each figure at most once
  std::optional<double> value_of(MeasuredFigure figure) const;
};

}  // namespace pipesim
