#include "report/measured_comparison.h"

#include <fmt/format.h>

#include "report/format.h"
#include "report/result_figures.h"

namespace pipesim {

std::optional<double> FigureComparison::relative_error() const {
  if (!predicted) return std::nullopt;
  return (*predicted - measured) / measured;
}

std::optional<double> predicted_figure(const SimulationResult& r, MeasuredFigure figure) {
  switch (figure) {
    case MeasuredFigure::kStepTimeS:
      // A step is one batch: the steady period.
      return r.metrics.period_ns > 0 ? std::optional<double>(static_cast<double>(r.metrics.period_ns) * 1e-9)
                                     : std::nullopt;
    case MeasuredFigure::kTokensPerSPerGpu:
      return tokens_per_device_s(r);
    case MeasuredFigure::kModelTflopsPerGpu:
      return model_tflops_per_device(r);
    case MeasuredFigure::kMfuPercent: {
      const std::optional<double> mfu = model_flops_utilization(r);
      return mfu ? std::optional<double>(100 * *mfu) : std::nullopt;
    }
    case MeasuredFigure::kPeakMemoryGib:
      return static_cast<double>(r.memory.peak_bytes()) / (1024.0 * 1024.0 * 1024.0);
  }
  return std::nullopt;
}

const SimulationResult* measured_result(const MeasuredRun& measured,
                                        const std::vector<SimulationResult>& results) {
  for (const SimulationResult& r : results) {
    if (measured.schedule.empty() || r.schedule_name == measured.schedule) return &r;
  }
  return nullptr;
}

std::vector<FigureComparison> compare_with_measured(const MeasuredRun& measured,
                                                    const SimulationResult& result) {
  std::vector<FigureComparison> out;
  for (const MeasuredValue& v : measured.values)
    out.push_back({v.figure, v.value, predicted_figure(result, v.figure)});
  return out;
}

std::string measured_figure_text(double value) {
  if (value < 1000) return fmt::format("{:.4g}", value);
  const std::string digits = fmt::format("{:.0f}", value);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

std::string measured_comparison_text(const MeasuredRun& measured,
                                     const std::vector<SimulationResult>& results) {
  const SimulationResult* result = measured_result(measured, results);
  std::string out = "\n";
  out += wrap_lines(fmt::format("Measured ({}: {}):", measured.source, measured.reference));
  out += '\n';
  if (!result) {
    return out + fmt::format("  the measured schedule, {}, did not run here: nothing compared\n",
                             measured.schedule);
  }
  std::vector<std::vector<std::string>> rows;
  for (const FigureComparison& c : compare_with_measured(measured, *result)) {
    const MeasuredFigureInfo& info = measured_figure_info(c.figure);
    const std::optional<double> error = c.relative_error();
    rows.push_back({info.meaning, info.unit, measured_figure_text(c.measured),
                    c.predicted ? measured_figure_text(*c.predicted) : "-",
                    error ? fmt::format("{:+.1f} %", 100 * *error) : "-"});
  }
  out += render_table({"figure", "unit", "measured", "predicted", "error"}, rows);
  out += wrap_lines(fmt::format("  predicted by: {}{}", result->label,
                                result->profile_kind.empty() ? "" : ", profile " + result->profile_kind)) +
         "\n";
  if (!measured.flops.empty())
    out += wrap_lines("  FLOPs as the source counts them: " + measured.flops) + "\n";
  return out;
}

}  // namespace pipesim
