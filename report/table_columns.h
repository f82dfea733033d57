#pragma once
// The terminal table of `pipesim run`: a catalogue of columns, each with one unit in its header, '-' where a
// figure is unknown. The compact default fits 120 columns; --wide shows every column, --columns picks some.
// The best run that fits in memory (highest samples/s) is marked, and a legend line says so.
#include <string>
#include <vector>

#include "analysis/run_result.h"

namespace pipesim {

struct TableOptions {
  bool wide = false;                 // every column
  std::vector<std::string> columns;  // these columns (ids), in this order; overrides wide
};

struct TableColumnInfo {
  std::string id;
  std::string title;  // without the unit of byte columns, which depends on the figures
  bool compact;       // in the default table
};
std::vector<TableColumnInfo> table_columns();

// Splits "a,b,c" and checks every id against the catalogue (InputError naming the allowed ones).
std::vector<std::string> parse_column_list(const std::string& text, const std::string& option);

// The runs ordered by one table column (an id, checked as parse_column_list does): throughput columns
// (samples/s, tokens/s, TFLOP/s, MFU) descending, the others ascending; ties and unknown figures ('-') keep
// their order, unknown ones last.
std::vector<SimulationResult> sorted_by_column(std::vector<SimulationResult> results, const std::string& id);

// The index of the run marked best: the highest samples/s among those that fit (fits yes, or unknown when no
// run's fit is known); -1 when none qualifies.
int best_fitting_run(const std::vector<SimulationResult>& results);

std::string render_result_table(const std::string& scenario_name,
                                const std::vector<SimulationResult>& results,
                                const TableOptions& options = {});

}  // namespace pipesim
