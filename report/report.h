#pragma once
// Reports of simulated runs: CSV rows (columns in README, "Output formats"). The JSON record is
// report/result_record.h, the terminal table report/table_columns.h.
#include <optional>
#include <string>
#include <vector>

#include "analysis/run_result.h"

namespace pipesim {

struct ReportOptions {
  bool memory_timeline = false;  // include each device's activation memory over time in the JSON
};

// The Zero Bubble paper's per-batch bubble rate needs batches that end in a flush: not so for asynchronous
// schedules, whose batches overlap (reported as "-", null, or an empty CSV cell).
bool has_batch_bubble(const SimulationResult& result);

// Whether every device's peak memory fits the profile's memory capacity; empty when no capacity is known
// (explicit costs, or a profile without memory_capacity_gb). Shown as fits yes/no/- (table), true/false/empty
// (CSV), true/false/null (JSON).
std::optional<bool> fits_memory(const SimulationResult& result);

// One header line and one row per result; every column carries its unit; an unknown figure is an empty cell.
// csv_header() starts with the display label; results_to_csv() puts schedule_name before it.
std::vector<std::string> csv_header();
std::vector<std::string> csv_row(const SimulationResult& result);
std::string results_to_csv(const std::vector<SimulationResult>& results);

}  // namespace pipesim
