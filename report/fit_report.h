#pragma once
// Predictions beside measurements, as tables: the A100 fit (`pipesim costs --fit-a100`) per stage, and
// measured layer times (`pipesim costs --layer-times`) per layer.
#include <string>
#include <vector>

#include "io/layer_times.h"
#include "io/zb_reference.h"

namespace pipesim {

// The residual table, with the largest |error| of F, I and W at the end.
std::string render_fit_report(const std::vector<FitRow>& rows, const std::string& profile_source);

// Measured layer times (`pipesim costs --layer-times CSV`) beside the profile's predictions: predicted /
// measured per row, the measurement's provenance, and the mean and largest |error| per op.
std::string render_layer_times_report(const LayerTimesFile& file,
                                      const std::vector<LayerTimesComparison>& rows,
                                      const std::string& profile_source);

}  // namespace pipesim
