#pragma once
// Names the first failed run of a sweep for the error line: its row in the output CSV, its schedule, N and m
// and its error, so that the user can find it without opening the file.
#include <string>

#include "api/sweep.h"

namespace pipesim {

// "row R of PATH (SCHEDULE N=.. m=..): ERROR" for the first row whose error column is set; "" when none is.
std::string first_failed_run(const SweepTable& table, const std::string& csv_path);
// The same from a streamed sweep's summary.
std::string first_failed_run(const SweepSummary& summary, const std::string& csv_path);

}  // namespace pipesim
