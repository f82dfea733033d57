#include "api/sweep_failure.h"

#include <fmt/format.h>

#include <algorithm>

namespace pipesim {
namespace {

std::string cell(const SweepTable& table, const std::vector<std::string>& row, const std::string& column) {
  const auto it = std::find(table.header.begin(), table.header.end(), column);
  const auto index = static_cast<size_t>(it - table.header.begin());
  return index < row.size() ? row[index] : "";
}

// The CSV cell back as text: quotes removed, doubled quotes single.
std::string unquoted(const std::string& csv_cell) {
  if (csv_cell.size() < 2 || csv_cell.front() != '"') return csv_cell;
  std::string text;
  for (size_t i = 1; i + 1 < csv_cell.size(); ++i) {
    text += csv_cell[i];
    if (csv_cell[i] == '"') ++i;
  }
  return text;
}

}  // namespace

std::string first_failed_run(const SweepTable& table, const std::string& csv_path) {
  for (size_t i = 0; i < table.rows.size(); ++i) {
    const std::vector<std::string>& row = table.rows[i];
    if (row.empty() || row.back().empty()) continue;
    // Row 1 of the CSV is the header.
    return fmt::format("row {} of {} ({} N={} m={}): {}", i + 2, csv_path,
                       unquoted(cell(table, row, "schedule_name")), cell(table, row, "stages"),
                       cell(table, row, "microbatches"), unquoted(row.back()));
  }
  return "";
}

}  // namespace pipesim
