#pragma once
// Names the first failed run of a sweep for the error line: its row in the output CSV, its schedule, N and m
// and its error, so that the user can find it without opening the file.
#include <string>

#include "sweeps/sweep.h"

namespace pipesim {

// "row R of PATH (SCHEDULE N=.. m=..): ERROR" for a streamed sweep's first failed row; "" when none failed.
std::string first_failed_run(const SweepSummary& summary, const std::string& csv_path);
// The same for the first run skipped because its schedule cannot run at that point.
std::string first_skipped_run(const SweepSummary& summary, const std::string& csv_path);

}  // namespace pipesim
