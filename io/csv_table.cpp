#include "io/csv_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "base/did_you_mean.h"
#include "base/errors.h"

namespace pipesim {
namespace {

// Splits one line into cells; a cell that starts with '"' runs to its closing quote ("" is a quote inside).
std::vector<std::string> split_cells(const std::string& line, const std::string& path, int line_number) {
  std::vector<std::string> cells;
  std::string cell;
  size_t i = 0;
  for (;;) {
    cell.clear();
    if (i < line.size() && line[i] == '"') {
      ++i;
      for (;;) {
        if (i >= line.size())
          throw InputError(fmt::format("{}:{}: a quoted cell has no closing quote", path, line_number));
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            cell += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        cell += line[i++];
      }
      if (i < line.size() && line[i] != ',') {
        throw InputError(fmt::format("{}:{}: text after a quoted cell's closing quote", path, line_number));
      }
    } else {
      while (i < line.size() && line[i] != ',') cell += line[i++];
    }
    cells.push_back(cell);
    if (i >= line.size()) return cells;
    ++i;  // the comma
  }
}

}  // namespace

CsvTable::CsvTable(const std::string& path, const std::string& what) : path_(path) {
  std::ifstream file(path);
  if (!file) throw InputError(fmt::format("{}: cannot open ({})", path, what));
  int line_number = 0;
  for (std::string line; std::getline(file, line);) {
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (header_.empty()) comments_.push_back(line.substr(line.size() > 1 && line[1] == ' ' ? 2 : 1));
      continue;
    }
    std::vector<std::string> cells = split_cells(line, path, line_number);
    if (header_.empty()) {
      header_ = std::move(cells);
      continue;
    }
    if (cells.size() != header_.size()) {
      throw InputError(fmt::format("{}:{}: expected {} columns ({}), got {}", path, line_number,
                                   header_.size(), fmt::join(header_, ","), cells.size()));
    }
    rows_.push_back(std::move(cells));
    lines_.push_back(line_number);
  }
  if (header_.empty()) throw InputError(fmt::format("{}: no header line ({})", path, what));
}

bool CsvTable::has_column(const std::string& column) const {
  return std::find(header_.begin(), header_.end(), column) != header_.end();
}

size_t CsvTable::column_index(const std::string& column) const {
  const auto it = std::find(header_.begin(), header_.end(), column);
  if (it == header_.end()) {
    throw InputError(fmt::format("{}: no column '{}'{} (columns: {})", path_, column,
                                 did_you_mean(column, header_), fmt::join(header_, ",")));
  }
  return static_cast<size_t>(it - header_.begin());
}

const std::string& CsvTable::text(size_t row, const std::string& column) const {
  return rows_[row][column_index(column)];
}

double CsvTable::number(size_t row, const std::string& column) const {
  const std::string& cell = text(row, column);
  try {
    size_t used = 0;
    const double value = std::stod(cell, &used);
    if (used == cell.size() && std::isfinite(value)) return value;
  } catch (const std::exception&) {
  }
  throw InputError(
      fmt::format("{}:{}: column '{}': expected a number, got '{}'", path_, lines_[row], column, cell));
}

int CsvTable::integer(size_t row, const std::string& column) const {
  const double value = number(row, column);
  if (value != std::floor(value) || std::abs(value) > 2e9) {
    throw InputError(fmt::format("{}:{}: column '{}': expected an integer, got '{}'", path_, lines_[row],
                                 column, text(row, column)));
  }
  return static_cast<int>(value);
}

std::vector<int> CsvTable::integers(size_t row, const std::string& column) const {
  std::vector<int> values;
  std::stringstream stream(text(row, column));
  for (std::string item; std::getline(stream, item, ';');) {
    try {
      size_t used = 0;
      values.push_back(std::stoi(item, &used));
      if (used != item.size()) throw std::invalid_argument(item);
    } catch (const std::exception&) {
      throw InputError(
          fmt::format("{}:{}: column '{}': expected integers separated by ';'", path_, lines_[row], column));
    }
  }
  return values;
}

}  // namespace pipesim
