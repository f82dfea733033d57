#pragma once
// A comma-separated table as pipesim's data files write it: '#' comment lines, one header line, then rows;
// a cell may be double-quoted to hold commas ("flash, native GQA"; "" inside quotes is one quote). Values are
// looked up by column name; every error names the file, the line and the column.
#include <string>
#include <vector>

namespace pipesim {

class CsvTable {
 public:
  // `what` says what the file is, for the error when it cannot be opened ("the Zero Bubble reference data").
  CsvTable(const std::string& path, const std::string& what);

  size_t size() const { return rows_.size(); }
  const std::string& path() const { return path_; }
  int line(size_t row) const { return lines_[row]; }  // 1-based line of the row in the file
  // The comment lines before the header, without their '#' and leading space: where the data came from.
  const std::vector<std::string>& comments() const { return comments_; }
  bool has_column(const std::string& column) const;

  const std::string& text(size_t row, const std::string& column) const;
  double number(size_t row, const std::string& column) const;
  int integer(size_t row, const std::string& column) const;
  std::vector<int> integers(size_t row, const std::string& column) const;  // "24;32;64"

 private:
  size_t column_index(const std::string& column) const;

  std::string path_;
  std::vector<std::string> comments_;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<int> lines_;
};

}  // namespace pipesim
