#pragma once
// A run drawn in the terminal (`pipesim show`): one row per device, time left to right, each op labelled by
// its letter and microbatch ("F3", "B12"), idle time as dots, a time ruler and a legend.
#include <string>

#include "analysis/run_result.h"

namespace pipesim {

struct TimelineTextOptions {
  int width = 100;     // columns of the timeline itself
  bool color = false;  // ANSI background colours per op kind
};

// When every op boundary is a multiple of a common time unit and the makespan fits, each unit gets the same
// whole number of columns (at most 8), so the drawing is exact; otherwise times are rounded to columns.
std::string render_timeline(const SimulationResult& result, const TimelineTextOptions& options);

}  // namespace pipesim
