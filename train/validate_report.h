#pragma once
// What `pipesim validate` reports of a validation (train/validate.h): the errors of each prediction over the
// schedules, and the table, JSON and CSV it writes.
#include <string>

#include "train/validate.h"

namespace pipesim {

// Mean absolute percentage error of `metric` (predicted by `which` against measured) over the schedules.
enum class Prediction { kFitted, kFittedMeans, kCostModel };
double throughput_mape(const ValidationReport& report, Prediction which);
double makespan_mape(const ValidationReport& report, Prediction which);

std::string validation_table(const ValidationReport& report);
std::string validation_json_text(const ValidationReport& report);  // indented, with a final newline
std::string validation_csv(const ValidationReport& report);

}  // namespace pipesim
