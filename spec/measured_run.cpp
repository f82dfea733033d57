#include "spec/measured_run.h"

#include <stdexcept>

namespace pipesim {

const std::vector<MeasuredFigureInfo>& measured_figures() {
  static const std::vector<MeasuredFigureInfo> figures = {
      {"step_time_s", MeasuredFigure::kStepTimeS, "time per step", "s"},
      {"tokens_per_s_per_gpu", MeasuredFigure::kTokensPerSPerGpu, "tokens/s per GPU", "tokens/s"},
      {"model_tflops_per_gpu", MeasuredFigure::kModelTflopsPerGpu, "model TFLOP/s per GPU", "TFLOP/s"},
      {"mfu_percent", MeasuredFigure::kMfuPercent, "model FLOPs utilization", "%"},
      {"peak_memory_gib", MeasuredFigure::kPeakMemoryGib, "peak memory per GPU", "GiB"},
  };
  return figures;
}

const MeasuredFigureInfo& measured_figure_info(MeasuredFigure figure) {
  for (const MeasuredFigureInfo& info : measured_figures()) {
    if (info.figure == figure) return info;
  }
  throw std::logic_error("measured_figure_info: a figure without a row in measured_figures()");
}

std::optional<double> MeasuredRun::value_of(MeasuredFigure figure) const {
  for (const MeasuredValue& v : values) {
    if (v.figure == figure) return v.value;
  }
  return std::nullopt;
}

}  // namespace pipesim
