#include "sweeps/sweep_failure.h"

#include <fmt/format.h>

#include <algorithm>

namespace pipesim {
namespace {

std::string cell(const std::vector<std::string>& header, const std::vector<std::string>& row,
                 const std::string& column) {
  const auto it = std::find(header.begin(), header.end(), column);
  const auto index = static_cast<size_t>(it - header.begin());
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

// Row 1 of the CSV is the header.
std::string describe_failed_row(const std::vector<std::string>& header, const std::vector<std::string>& row,
                                size_t index, const std::string& csv_path) {
  return fmt::format("row {} of {} ({} N={} m={}): {}", index + 2, csv_path,
                     unquoted(cell(header, row, "schedule_name")), cell(header, row, "devices"),
                     cell(header, row, "microbatches"), unquoted(row.back()));
}

}  // namespace

std::string first_failed_run(const SweepSummary& summary, const std::string& csv_path) {
  if (summary.first_failed_row.empty()) return "";
  return describe_failed_row(summary.header, summary.first_failed_row, summary.first_failed_index, csv_path);
}

std::string first_skipped_run(const SweepSummary& summary, const std::string& csv_path) {
  if (summary.first_skipped_row.empty()) return "";
  return describe_failed_row(summary.header, summary.first_skipped_row, summary.first_skipped_index,
                             csv_path);
}

}  // namespace pipesim
